/**
 * Every JSON-RPC error code the fleet sends, in one table; no code means two things. The protocol
 * codes are JSON-RPC 2.0's; the server codes avoid the MCP SDK's own (ErrorCode: -32000
 * ConnectionClosed, -32001 RequestTimeout, -32042 UrlElicitationRequired; -32002 is MCP's
 * resource-not-found).
 */
export const JSONRPC_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** The server is closing (the SDK's ConnectionClosed). */
  CONNECTION_CLOSED: -32000,
  /** MCP's resources/read of an unknown URI. */
  RESOURCE_NOT_FOUND: -32002,
  /** A GET/DELETE /mcp without Mcp-Session-Id. */
  SESSION_REQUIRED: -32008,
  /** An unknown or expired Mcp-Session-Id. */
  SESSION_NOT_FOUND: -32010,
  /** The 2026-07-28 stateless protocol: Mcp-* headers that disagree with the body. */
  HEADER_MISMATCH: -32020,
  /** The 2026-07-28 stateless protocol: the request needs a client capability it did not declare (data.requiredCapabilities). */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** The 2026-07-28 stateless protocol: a protocol version the gateway does not speak. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  FORBIDDEN: -32003,
  NOT_FOUND: -32004,
  UPSTREAM_UNAVAILABLE: -32005,
  NOT_CONFIGURED: -32006,
  TIMEOUT: -32007,
  CONFLICT: -32009,
  UNAUTHORIZED: -32011,
  UPSTREAM_ERROR: -32012,
  PAYLOAD_TOO_LARGE: -32013,
  RATE_LIMITED: -32029,
} as const;

/** The one table from error code to HTTP status and JSON-RPC code (decisions.md, "Envelopes"). */
export const ERROR_CODES = {
  VALIDATION_ERROR: { status: 400, rpc: JSONRPC_CODES.INVALID_PARAMS },
  UNAUTHORIZED: { status: 401, rpc: JSONRPC_CODES.UNAUTHORIZED },
  FORBIDDEN: { status: 403, rpc: JSONRPC_CODES.FORBIDDEN },
  NOT_FOUND: { status: 404, rpc: JSONRPC_CODES.NOT_FOUND },
  UNKNOWN_TOOL: { status: 404, rpc: JSONRPC_CODES.INVALID_PARAMS },
  CONFLICT: { status: 409, rpc: JSONRPC_CODES.CONFLICT },
  PAYLOAD_TOO_LARGE: { status: 413, rpc: JSONRPC_CODES.PAYLOAD_TOO_LARGE },
  RATE_LIMITED: { status: 429, rpc: JSONRPC_CODES.RATE_LIMITED },
  INTERNAL: { status: 500, rpc: JSONRPC_CODES.INTERNAL_ERROR },
  UPSTREAM_ERROR: { status: 502, rpc: JSONRPC_CODES.UPSTREAM_ERROR },
  UPSTREAM_UNAVAILABLE: { status: 503, rpc: JSONRPC_CODES.UPSTREAM_UNAVAILABLE },
  NOT_CONFIGURED: { status: 503, rpc: JSONRPC_CODES.NOT_CONFIGURED },
  TIMEOUT: { status: 504, rpc: JSONRPC_CODES.TIMEOUT },
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

/**
 * Anything thrown becomes an AppError; unknown errors become INTERNAL and keep their cause for the log
 * only. Only what the edge raises about the request itself (its body, its URL) is the caller's fault:
 * a RangeError such as a stack overflow is a fault of the service, whatever input led to it (input
 * nested too deeply is refused before any handler runs, by parseOrThrow).
 */
/**
 * For a body the JSON parser refused: what it is when it is valid JSON all the same, only not an
 * object or array (`5`, `"x"`, `null`, which the parser's strict mode refuses), e.g. "a JSON number";
 * undefined when it is not JSON at all.
 */
export function bareJsonKind(err: unknown): string | undefined {
  const body = (err as { body?: unknown } | undefined)?.body;
  if (typeof body !== 'string' || body.length > 1000) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (value === null) return 'JSON null';
  if (typeof value === 'object') return undefined;
  return `a JSON ${typeof value === 'number' ? 'number' : typeof value === 'string' ? 'string' : 'boolean'}`;
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; expose?: boolean; code?: string; name?: string } | undefined;
  // body-parser errors
  if (e?.type === 'entity.too.large') {
    return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit; send less data or raise BODY_LIMIT.', {
      cause: err,
    });
  }
  if (e?.type === 'entity.parse.failed') {
    const kind = bareJsonKind(err);
    if (kind) return new AppError('VALIDATION_ERROR', `The request body is ${kind}, not a JSON object; send {...}.`, { cause: err });
    return new AppError('VALIDATION_ERROR', 'The request body is not valid JSON; check quoting and commas.', { cause: err });
  }
  if (e?.type === 'request.aborted') {
    return new AppError('VALIDATION_ERROR', 'The request body ended before it was complete; send it again.', { cause: err });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new AppError('VALIDATION_ERROR', 'The request body encoding is not supported; send UTF-8 JSON.', { cause: err });
  }
  if (err instanceof URIError) {
    return new AppError('VALIDATION_ERROR', 'The URL path has an invalid percent-escape; encode it with encodeURIComponent.', {
      cause: err,
    });
  }
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') {
    return new AppError('TIMEOUT', 'The operation took longer than its time limit.', { cause: err });
  }
  // http-errors from the request's own parsing (Express's body and URL handling mark those `expose`); an
  // error with a 4xx status from a library a handler called says nothing about this request.
  if (e?.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new AppError('VALIDATION_ERROR', 'The request could not be read; check its format.', { cause: err });
  }
  return new AppError('INTERNAL', 'An unexpected error occurred; the cause is in the service log.', { cause: err });
}
