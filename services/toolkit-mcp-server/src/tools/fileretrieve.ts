import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { readWorkspaceFile, type ToolDeps } from './context';

export function fileretrieveTool(deps: ToolDeps) {
  return defineTool({
    name: 'fileretrieve',
    title: 'Retrieve files',
    description:
      'Text of up to 20 files inside WORKSPACE_ROOTS, whole or a 1-based inclusive line range, with line numbers. Files over TOOLKIT_MAX_FILE_BYTES and binary files are refused.',
    input: z
      .object({
        paths: z
          .array(z.string().min(1).max(4096))
          .min(1)
          .max(20)
          .describe('File paths, absolute or relative to the first workspace root.'),
        startLine: z.number().int().min(1).optional().describe('First line to return (1-based, default 1).'),
        endLine: z.number().int().min(1).optional().describe('Last line to return (inclusive, default the last line).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const files = [];
      for (const p of args.paths) {
        const f = await readWorkspaceFile(deps, p, 'paths');
        const lines = f.text.split('\n');
        if (lines[lines.length - 1] === '') lines.pop();
        const start = args.startLine ?? 1;
        const end = Math.min(args.endLine ?? lines.length, lines.length);
        files.push({
          path: f.relative,
          totalLines: lines.length,
          startLine: start,
          endLine: end,
          content: lines.slice(start - 1, end).join('\n'),
        });
      }
      return { files };
    },
  });
}
