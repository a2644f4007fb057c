import fs from 'node:fs/promises';
import { AppError, secretFilesFrom, type Env, type Logger } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { backupDir, type Config } from '../config';
import { type ConfigFormat, formatFromPath, parseConfig } from './formats';
import { SchemaValidatorPool } from './schema-worker';
import { createSecretPolicy, type SecretPolicy } from './secrets';

/** What every config-mcp tool needs, built once per app. */
export interface ConfigContext {
  config: Config;
  logger: Logger;
  environment: Env;
  secrets: SecretPolicy;
  validator: SchemaValidatorPool;
  workspace(): Promise<Workspace>;
}

export function createContext(config: Config, logger: Logger, environment: Env): ConfigContext {
  let opening: Promise<Workspace> | undefined;
  return {
    config,
    logger,
    environment,
    secrets: createSecretPolicy(config.ENV_SECRET_PATTERNS),
    validator: new SchemaValidatorPool(config.VALIDATE_TIMEOUT_MS),
    workspace() {
      // backups hold copies of config files, secret ones too: refused like DATA_DIR wherever BACKUP_DIR is
      const stores = [{ path: backupDir(config), label: 'the backup directory (BACKUP_DIR)' }];
      opening ??= Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger, stores)).catch((err: Error) => {
        opening = undefined;
        throw new AppError('NOT_CONFIGURED', `${err.message}`);
      });
      return opening;
    },
  };
}

export function fsError(err: unknown, field: string, input: string): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') throw new AppError('NOT_FOUND', `${field} "${input}" does not exist.`);
  if (code === 'EACCES' || code === 'EPERM') throw new AppError('FORBIDDEN', `No permission to access ${field} "${input}".`);
  if (code === 'EISDIR') throw new AppError('VALIDATION_ERROR', `${field} "${input}" is a directory; name a file.`);
  if (code === 'ELOOP') throw new AppError('VALIDATION_ERROR', `${field} "${input}" is a symlink where none may be; name the file itself.`);
  throw err;
}

export interface LoadedFile {
  absolute: string;
  relative: string;
  text: string;
  bytes: number;
}

/** Reads a regular file inside the workspace roots, refusing anything over `maxBytes`. */
export async function readWorkspaceFile(ctx: ConfigContext, input: string, field: string, maxBytes: number): Promise<LoadedFile> {
  const ws = await ctx.workspace();
  const resolved = await ws.resolve(input, { mustExist: true, field });
  let handle: fs.FileHandle | undefined;
  try {
    // open, then verify: the descriptor's directory is checked, so a swapped-in symlink cannot lead outside
    handle = (await ws.openFile(resolved.absolute, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK, undefined, field)).handle;
    const st = await handle.stat();
    if (!st.isFile())
      throw new AppError('VALIDATION_ERROR', `${field} "${input}" is not a regular file.`, {
        details: [{ path: field, message: 'not a file' }],
      });
    if (st.size > maxBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `${field} "${input}" is ${st.size} bytes; the limit is ${maxBytes} (CONFIG_MAX_BYTES).`);
    }
    const buf = Buffer.alloc(st.size);
    const { bytesRead } = await handle.read(buf, 0, st.size, 0);
    return {
      absolute: resolved.absolute,
      relative: resolved.relative,
      text: buf.subarray(0, bytesRead).toString('utf8'),
      bytes: bytesRead,
    };
  } catch (err) {
    if (err instanceof AppError) throw err;
    return fsError(err, field, input);
  } finally {
    await handle?.close();
  }
}

export function resolveFormat(explicit: ConfigFormat | undefined, file: string | undefined, field: string): ConfigFormat {
  const format = explicit ?? (file ? formatFromPath(file) : undefined);
  if (!format) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Cannot tell the format of ${field} from its name; pass it explicitly (json, yaml, toml or env).`,
      {
        details: [{ path: field, message: 'unknown format' }],
      },
    );
  }
  return format;
}

export function checkContentSize(ctx: ConfigContext, content: string, field: string): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > ctx.config.CONFIG_MAX_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `${field} is ${bytes} bytes; the limit is ${ctx.config.CONFIG_MAX_BYTES} (CONFIG_MAX_BYTES).`);
  }
}

/** A config document from a workspace file or from inline text, parsed. */
export async function loadDocument(
  ctx: ConfigContext,
  source: { path?: string; content?: string; format?: ConfigFormat; unflatten?: boolean },
  fields: { path: string; content: string; format: string },
): Promise<{ data: unknown; format: ConfigFormat; text: string; file?: LoadedFile }> {
  if (source.path !== undefined) {
    const file = await readWorkspaceFile(ctx, source.path, fields.path, ctx.config.CONFIG_MAX_BYTES);
    const format = resolveFormat(source.format, source.path, fields.path);
    return { data: parseConfig(file.text, format, { field: fields.path, unflatten: source.unflatten }), format, text: file.text, file };
  }
  const content = source.content ?? '';
  checkContentSize(ctx, content, fields.content);
  const format = resolveFormat(source.format, undefined, fields.format);
  return { data: parseConfig(content, format, { field: fields.content, unflatten: source.unflatten }), format, text: content };
}
