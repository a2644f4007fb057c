import { AppError } from '@mcp-fleet/kit';

/** Errno failures become errors a caller can act on; anything else stays unknown (INTERNAL, logged). */
export function toFsError(err: unknown, shown: string): unknown {
  if (err instanceof AppError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new AppError('NOT_FOUND', `"${shown}" does not exist; file_list shows what does.`, { cause: err });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new AppError('FORBIDDEN', `The service has no permission for "${shown}".`, { cause: err });
    case 'ENOTDIR':
      return new AppError('VALIDATION_ERROR', `A parent of "${shown}" is a file, not a directory.`, { cause: err });
    case 'EISDIR':
      return new AppError('VALIDATION_ERROR', `"${shown}" is a directory; use file_list for directories.`, { cause: err });
    case 'EEXIST':
      return new AppError('CONFLICT', `"${shown}" (or one of its parents) already exists as something else.`, { cause: err });
    case 'ELOOP':
      return new AppError('VALIDATION_ERROR', `"${shown}" is a symlink loop (or a symlink where none may be).`, { cause: err });
    case 'ENAMETOOLONG':
      return new AppError('VALIDATION_ERROR', `"${shown}" is too long for the filesystem.`, { cause: err });
    case 'EFBIG':
    case 'ENOSPC':
    case 'EDQUOT':
      return new AppError('PAYLOAD_TOO_LARGE', `No room to write "${shown}" (${code}).`, { cause: err });
    default:
      return err;
  }
}

/** Runs an fs operation and maps its errno failures (see toFsError). */
export async function fsCall<T>(shown: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw toFsError(err, shown);
  }
}
