import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type ConfigContext, fsError, loadDocument, resolveFormat } from '../lib/context';
import { formatSchema, serializeConfig } from '../lib/formats';
import { redactData } from '../lib/secrets';

const input = z
  .object({
    action: z.enum(['read', 'convert']).describe('read: parse and show the data; convert: produce it in another format.'),
    path: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Config file inside the workspace roots (absolute, or relative to the first root).'),
    content: z.string().optional().describe('Inline config text instead of a file (needs `from`).'),
    from: formatSchema
      .optional()
      .describe('Source format; by default taken from the file name (.json, .yaml/.yml, .toml, .env / *.env / .env.*).'),
    to: formatSchema.optional().describe('convert: target format; defaults to the format of output_path.'),
    output_path: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'convert: write the result to this file (inside the workspace roots) instead of returning it. Real values are written; nothing is redacted.',
      ),
    overwrite: z.boolean().default(false).describe('convert: replace output_path if it exists.'),
    indent: z.number().int().min(0).max(8).default(2).describe('Indentation for JSON and YAML output.'),
    unflatten: z.boolean().default(false).describe('.env input: split KEY__SUB names into nested objects.'),
  })
  .strict()
  .superRefine((args, ctx) => {
    if ((args.path === undefined) === (args.content === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'give exactly one of path or content' });
    }
    if (args.content !== undefined && !args.from) ctx.addIssue({ code: 'custom', path: ['from'], message: 'inline content needs from' });
    if (args.action === 'read' && (args.to || args.output_path)) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'to and output_path are used only by action "convert"' });
    }
    if (args.action === 'convert' && !args.to && !args.output_path) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'action "convert" needs to (or an output_path whose name gives the format)' });
    }
  });

export function configFileTool(ctx: ConfigContext) {
  return defineTool({
    name: 'config_file',
    title: 'Config file',
    description:
      'Read a JSON, YAML, TOML or .env config (a file inside the workspace roots, or inline content) or convert it to another of those formats, optionally writing the result to output_path (atomic; refuses to overwrite unless overwrite is true). Files and content over CONFIG_MAX_BYTES (default 1 MiB) are refused. Values under secret-looking keys and URL passwords are "[redacted]" in every response; only a written file gets the real values. Parse errors give line and column. Nested data written as .env is flattened with "__" (KEY__SUB, LIST__0); TOML refuses null values.',
    input,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const doc = await loadDocument(
        ctx,
        { path: args.path, content: args.content, format: args.from, unflatten: args.unflatten },
        { path: 'path', content: 'content', format: 'from' },
      );
      const source = doc.file ? { path: doc.file.relative, bytes: doc.file.bytes } : { bytes: Buffer.byteLength(doc.text, 'utf8') };

      if (args.action === 'read') {
        const red = redactData(doc.data, ctx.secrets);
        return {
          ...source,
          format: doc.format,
          data: red.data,
          redactedPaths: red.redactedPaths,
          ...(red.redactedCount > red.redactedPaths.length ? { redactedCount: red.redactedCount } : {}),
        };
      }

      const to = resolveFormat(args.to, args.output_path, 'to');
      if (args.output_path === undefined) {
        const red = redactData(doc.data, ctx.secrets);
        const content = serializeConfig(red.data, to, args.indent);
        return { ...source, from: doc.format, to, content, redactedPaths: red.redactedPaths };
      }

      const output = serializeConfig(doc.data, to, args.indent);
      const ws = await ctx.workspace();
      const target = await ws.resolve(args.output_path, { field: 'output_path' });
      if (target.exists) {
        const st = await fs.stat(target.absolute);
        if (st.isDirectory()) throw new AppError('VALIDATION_ERROR', `output_path "${args.output_path}" is a directory; name a file.`);
        if (!args.overwrite) {
          throw new AppError('CONFLICT', `output_path "${args.output_path}" already exists; pass overwrite: true to replace it.`);
        }
      } else {
        try {
          if (!(await fs.stat(path.dirname(target.absolute))).isDirectory())
            throw Object.assign(new Error('not a dir'), { code: 'ENOTDIR' });
        } catch (err) {
          fsError(err, 'the directory of output_path', path.dirname(args.output_path));
        }
      }
      try {
        await ws.writeFile(target.absolute, output, {}, 'output_path');
      } catch (err) {
        fsError(err, 'output_path', args.output_path);
      }
      ctx.logger.info('config converted', { from: doc.format, to, output: target.relative });
      return { ...source, from: doc.format, to, written: target.relative, writtenBytes: Buffer.byteLength(output, 'utf8') };
    },
  });
}
