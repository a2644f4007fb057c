import fs from 'node:fs/promises';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { type Workspace } from '@mcp-fleet/kit/workspace';
import type { Config } from '../config';

export interface ToolDeps {
  config: Config;
  ws: Workspace;
  logger: Logger;
}

/** A workspace file's text, refusing directories, binaries and files over the cap. */
export async function readWorkspaceFile(
  deps: ToolDeps,
  input: string,
  field = 'path',
): Promise<{ path: string; relative: string; text: string }> {
  const r = await deps.ws.resolve(input, { mustExist: true, field });
  const st = await fs.stat(r.absolute);
  if (!st.isFile())
    throw new AppError('VALIDATION_ERROR', `${field} "${input}" is not a regular file.`, {
      details: [{ path: field, message: 'not a file' }],
    });
  if (st.size > deps.config.TOOLKIT_MAX_FILE_BYTES) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `${input} is ${st.size} bytes, over TOOLKIT_MAX_FILE_BYTES (${deps.config.TOOLKIT_MAX_FILE_BYTES}); ask for a line range of a smaller file.`,
    );
  }
  const buf = await fs.readFile(r.absolute);
  if (buf.includes(0)) throw new AppError('VALIDATION_ERROR', `${input} looks binary (NUL bytes); only text files are returned.`);
  return { path: r.absolute, relative: r.relative, text: buf.toString('utf8') };
}
