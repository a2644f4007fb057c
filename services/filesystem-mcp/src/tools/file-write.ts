import fs from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { openRegularFile } from '../lib/content';
import { humanBytes, pathArg, resolveIn, shown, type FsDeps } from '../lib/context';
import { fsCall, toFsError } from '../lib/fs-errors';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decode(content: string, encoding: 'utf8' | 'base64'): Buffer {
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  const compact = content.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) {
    throw new AppError('VALIDATION_ERROR', 'content is not valid base64; send standard base64 (A-Z a-z 0-9 + /, padded with =).', {
      details: [{ path: 'content', message: 'invalid base64' }],
    });
  }
  return Buffer.from(compact, 'base64');
}

async function lstatOrNull(file: string, name: string): Promise<Stats | null> {
  try {
    return await fs.lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw toFsError(err, name);
  }
}

export function createFileWriteTool(deps: FsDeps) {
  const cap = deps.limits.maxWriteBytes;
  const tooLarge = (bytes: number, what: string) =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      `${what} would be ${bytes} bytes; the limit is ${humanBytes(cap)} (FILE_MAX_WRITE_BYTES, also bounded by BODY_LIMIT). Write less or split the file.`,
      { details: [{ path: 'content', message: `over ${cap} bytes` }] },
    );

  return defineTool({
    name: 'file_write',
    title: 'Write a file',
    description:
      `Write a file inside the workspace roots, atomically (temporary file + rename; an existing file keeps its permissions). ` +
      `mode "overwrite" (default) replaces, "create" refuses an existing file (CONFLICT), "append" adds to the end. ` +
      `At most ${humanBytes(cap)} per file (FILE_MAX_WRITE_BYTES and the request body limit); append rewrites the whole file, so the result must fit too. ` +
      `Never writes through a symlink that leads outside the roots, nor to a secret file (.env, private keys, DATA_DIR: SECRET_FILES; FORBIDDEN). ` +
      `Missing parent directories need createDirs: true.`,
    input: z
      .object({
        path: pathArg('File to write.'),
        content: z.string().describe('The new content: text for utf8, or base64 of the bytes.'),
        encoding: z.enum(['utf8', 'base64']).default('utf8').describe('How content is encoded (default utf8).'),
        mode: z
          .enum(['overwrite', 'create', 'append'])
          .default('overwrite')
          .describe('overwrite (default): replace; create: fail with CONFLICT if it exists; append: add to the end.'),
        createDirs: z.boolean().default(false).describe('Create missing parent directories (default false).'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      if (/[\\/]$/.test(args.path) || args.path.trim() === '') {
        throw new AppError('VALIDATION_ERROR', `path "${args.path}" names a directory; give a file name.`, {
          details: [{ path: 'path', message: 'directory path' }],
        });
      }
      const data = decode(args.content, args.encoding);
      if (data.length > cap) throw tooLarge(data.length, 'The content');

      let resolved = await resolveIn(deps, args.path, false);
      let name = shown(resolved.relative);
      if (resolved.relative === '') {
        throw new AppError('VALIDATION_ERROR', `"${args.path}" is a workspace root directory; give a file name inside it.`);
      }

      const existing = await lstatOrNull(resolved.absolute, name);
      if (existing?.isSymbolicLink()) {
        // resolve() follows live links, so a link still here is dangling: say where it would lead.
        const target = path.resolve(path.dirname(resolved.absolute), await fsCall(name, () => fs.readlink(resolved.absolute)));
        await resolveIn(deps, target, false);
        throw new AppError('VALIDATION_ERROR', `"${name}" is a symlink to a missing file; write to the target path itself.`, {
          details: [{ path: 'path', message: 'dangling symlink' }],
        });
      }
      if (existing?.isDirectory()) {
        throw new AppError('VALIDATION_ERROR', `"${name}" is a directory; give a file name (file_list shows its contents).`, {
          details: [{ path: 'path', message: 'is a directory' }],
        });
      }
      if (existing && !existing.isFile()) {
        throw new AppError('VALIDATION_ERROR', `"${name}" is not a regular file; only regular files can be written.`);
      }
      if (existing && args.mode === 'create') {
        throw new AppError('CONFLICT', `"${name}" already exists; use mode "overwrite" or "append", or pick another name.`);
      }

      const parent = path.dirname(resolved.absolute);
      if (!existing) {
        const parentStat = await lstatOrNull(parent, path.dirname(name));
        if (!parentStat) {
          if (!args.createDirs) {
            throw new AppError('NOT_FOUND', `The directory of "${name}" does not exist; pass createDirs: true to create it.`, {
              details: [{ path: 'path', message: 'parent directory missing' }],
            });
          }
          // one segment at a time, each inside its verified parent: a link on the way is refused, never followed
          await fsCall(name, async () => deps.ws.makeDirectories(parent));
          resolved = await resolveIn(deps, args.path, false);
          name = shown(resolved.relative);
        }
      }

      let bytes: Buffer = data;
      if (args.mode === 'append' && existing) {
        if (existing.size + data.length > cap) throw tooLarge(existing.size + data.length, 'The appended file');
        const { handle } = await openRegularFile(deps.ws, resolved.absolute, name);
        try {
          bytes = Buffer.concat([await handle.readFile(), data]);
        } finally {
          await handle.close();
        }
      }

      let after: Stats;
      try {
        // Inside the verified parent directory's descriptor (Workspace.writeFile); "create" links the new
        // file into place, which fails if one appeared since the check above.
        after = await deps.ws.writeFile(resolved.absolute, bytes, { exclusive: args.mode === 'create' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && args.mode === 'create') {
          throw new AppError('CONFLICT', `"${name}" already exists; use mode "overwrite" or "append", or pick another name.`);
        }
        throw toFsError(err, name);
      }
      ctx.logger.info('file written', { path: name, root: resolved.root, bytes: data.length, mode: args.mode, requestId: ctx.requestId });
      return {
        path: name,
        root: resolved.root,
        bytesWritten: data.length,
        size: after.size,
        created: !existing,
        mode: (after.mode & 0o777).toString(8).padStart(4, '0'),
      };
    },
  });
}
