import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { completeUtf8Length, looksBinary, openRegularFile } from '../lib/content';
import { humanBytes, pathArg, resolveIn, shown, type FsDeps } from '../lib/context';

export function createFileReadTool(deps: FsDeps) {
  const cap = deps.limits.maxReadBytes;
  return defineTool({
    name: 'file_read',
    title: 'Read a file',
    description:
      `Read a regular file inside the workspace roots as UTF-8 text or base64, optionally a byte range (offset, length). ` +
      `At most ${humanBytes(cap)} per call (FILE_MAX_READ_BYTES); a longer file is cut, says truncated: true and gives nextOffset to continue. ` +
      `A file that looks binary read as utf8 says binary: true (read it again with encoding "base64"). Directories: use file_list. ` +
      `Secret files (.env, private keys, the fleet's DATA_DIR; SECRET_FILES) are refused with FORBIDDEN.`,
    input: z
      .object({
        path: pathArg('File to read.'),
        encoding: z.enum(['utf8', 'base64']).default('utf8').describe('utf8 for text (default), base64 for exact bytes.'),
        offset: z.number().int().min(0).default(0).describe('Byte offset to start at (default 0).'),
        length: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`Bytes to read from offset (default: to the end, at most ${humanBytes(cap)}).`),
        maxBytes: z
          .number()
          .int()
          .min(1)
          .max(cap)
          .optional()
          .describe(`Lower cap for this call (1-${cap}); the result says truncated: true when the file goes on.`),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const resolved = await resolveIn(deps, args.path, true);
      const name = shown(resolved.relative);
      const { handle, size } = await openRegularFile(deps.ws, resolved.absolute, name);
      try {
        const limit = Math.min(args.maxBytes ?? cap, cap, args.length ?? Number.POSITIVE_INFINITY);
        const want = Math.max(0, Math.min(limit, size - args.offset));
        const buf = Buffer.alloc(want);
        let got = 0;
        while (got < want) {
          const { bytesRead } = await handle.read(buf, got, want - got, args.offset + got);
          if (bytesRead === 0) break; // the file shrank meanwhile
          got += bytesRead;
        }
        let bytes = buf.subarray(0, got);
        const more = args.offset + got < size;
        const binary = looksBinary(bytes);
        // Never split a UTF-8 character at a cut: the next read starts where this one stops.
        if (args.encoding === 'utf8' && more && !binary) bytes = bytes.subarray(0, completeUtf8Length(bytes));
        const end = args.offset + bytes.length;
        const truncated = end < size && (args.length === undefined || bytes.length < args.length);
        return {
          path: name,
          root: resolved.root,
          size,
          encoding: args.encoding,
          offset: args.offset,
          content: bytes.toString(args.encoding),
          bytesRead: bytes.length,
          truncated,
          ...(end < size ? { nextOffset: end } : {}),
          binary,
          ...(binary && args.encoding === 'utf8'
            ? { hint: 'This file looks binary; the utf8 text is lossy. Read it with encoding "base64" for the exact bytes.' }
            : {}),
        };
      } finally {
        await handle.close();
      }
    },
  });
}
