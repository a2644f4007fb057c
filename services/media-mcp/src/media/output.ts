import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { within, type Workspace } from '@mcp-fleet/kit/workspace';

export interface PlannedOutput {
  /** Where the result ends up. */
  final: string;
  /** Where the engine writes; renamed to final on success, removed on failure or cancel. */
  temp: string;
  /** The final path relative to its workspace root, for answers. */
  relative: string;
  overwrite: boolean;
}

/** The output folder as a resolved path inside the workspace roots. */
export async function outputFolder(ws: Workspace, configured: string): Promise<string> {
  const resolved = await ws.resolve(configured, { field: 'MEDIA_OUTPUT_DIR' });
  return resolved.absolute;
}

const stemOf = (name: string) =>
  path
    .basename(name, path.extname(name))
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 100) || 'output';

/**
 * Plans an output file under the output folder: the caller's relative name or `<input stem>-<suffix>.<ext>`.
 * An existing file is refused with CONFLICT unless overwrite is true.
 */
export async function planOutput(
  ws: Workspace,
  folder: string,
  options: { requested?: string; inputName: string; suffix: string; ext: string; overwrite: boolean },
): Promise<PlannedOutput> {
  const requested = options.requested ?? `${stemOf(options.inputName)}-${options.suffix}.${options.ext}`;
  if (path.isAbsolute(requested)) {
    throw new AppError('VALIDATION_ERROR', 'output is a name relative to the output folder, not an absolute path.', {
      details: [{ path: 'output', message: 'absolute path' }],
    });
  }
  const wanted = path.join(folder, requested.endsWith(`.${options.ext}`) ? requested : `${requested}.${options.ext}`);
  const resolved = await ws.resolve(wanted, { field: 'output' });
  if (!within(folder, resolved.absolute) || resolved.absolute === folder) {
    throw new AppError('FORBIDDEN', `output "${requested}" leaves the output folder; give a name inside it.`, {
      details: [{ path: 'output', message: 'outside the output folder' }],
    });
  }
  if (resolved.exists && !options.overwrite) {
    throw new AppError('CONFLICT', `output "${resolved.relative}" already exists; choose another name or pass overwrite: true.`, {
      details: [{ path: 'output', message: 'exists' }],
    });
  }
  await fs.mkdir(path.dirname(resolved.absolute), { recursive: true });
  const dir = path.dirname(resolved.absolute);
  const temp = path.join(dir, `.${randomBytes(6).toString('hex')}.partial.${options.ext}`);
  return { final: resolved.absolute, temp, relative: resolved.relative, overwrite: options.overwrite };
}

/** Moves the finished temp file into place: link (refuses an existing file) or, with overwrite, rename. */
export async function commitOutput(out: PlannedOutput): Promise<{ path: string; bytes: number }> {
  try {
    if (out.overwrite) await fs.rename(out.temp, out.final);
    else {
      await fs.link(out.temp, out.final);
      await fs.rm(out.temp, { force: true });
    }
  } catch (err) {
    await fs.rm(out.temp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new AppError('CONFLICT', `output "${out.relative}" appeared while the work ran; choose another name or pass overwrite: true.`);
    }
    throw err;
  }
  const st = await fs.stat(out.final);
  return { path: out.relative, bytes: st.size };
}

export const discardOutput = (out: PlannedOutput) => fs.rm(out.temp, { force: true });
