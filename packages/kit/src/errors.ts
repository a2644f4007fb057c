/** The one table from error code to HTTP status and JSON-RPC code (decisions.md, "Envelopes"). */
export const ERROR_CODES = {
  VALIDATION_ERROR: { status: 400, rpc: -32602 },
  UNAUTHORIZED: { status: 401, rpc: -32001 },
  FORBIDDEN: { status: 403, rpc: -32003 },
  NOT_FOUND: { status: 404, rpc: -32004 },
  UNKNOWN_TOOL: { status: 404, rpc: -32602 },
  CONFLICT: { status: 409, rpc: -32009 },
  PAYLOAD_TOO_LARGE: { status: 413, rpc: -32013 },
  RATE_LIMITED: { status: 429, rpc: -32029 },
  INTERNAL: { status: 500, rpc: -32603 },
  UPSTREAM_ERROR: { status: 502, rpc: -32002 },
  UPSTREAM_UNAVAILABLE: { status: 503, rpc: -32005 },
  NOT_CONFIGURED: { status: 503, rpc: -32006 },
  TIMEOUT: { status: 504, rpc: -32007 },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  path: string;
  message: string;
  code?: string;
}

export interface AppErrorOptions {
  details?: unknown;
  cause?: unknown;
  /** Seconds, sent as Retry-After (RATE_LIMITED, UPSTREAM_UNAVAILABLE). */
  retryAfter?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get rpcCode(): number {
    return ERROR_CODES[this.code].rpc;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

export function statusForCode(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

/** Anything thrown becomes an AppError; unknown errors become INTERNAL and keep their cause for the log only. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; code?: string; name?: string } | undefined;
  // body-parser errors
  if (e?.type === 'entity.too.large') {
    return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit; send less data or raise BODY_LIMIT.', {
      cause: err,
    });
  }
  if (e?.type === 'entity.parse.failed') {
    return new AppError('VALIDATION_ERROR', 'The request body is not valid JSON; check quoting and commas.', { cause: err });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new AppError('VALIDATION_ERROR', 'The request body encoding is not supported; send UTF-8 JSON.', { cause: err });
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new AppError('VALIDATION_ERROR', 'The input is nested too deeply to process; flatten it.', { cause: err });
  }
  if (err instanceof URIError) {
    return new AppError('VALIDATION_ERROR', 'The URL path has an invalid percent-escape; encode it with encodeURIComponent.', {
      cause: err,
    });
  }
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') {
    return new AppError('TIMEOUT', 'The operation took longer than its time limit.', { cause: err });
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new AppError('VALIDATION_ERROR', 'The request could not be read; check its format.', { cause: err });
  }
  return new AppError('INTERNAL', 'An unexpected error occurred; the cause is in the service log.', { cause: err });
}
