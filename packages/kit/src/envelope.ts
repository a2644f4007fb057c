import type { AppError, ErrorCode } from './errors';

export type SuccessEnvelope<T = unknown> = {
  success: true;
  result: T;
  timestamp: string;
  service: string;
};

export type ErrorEnvelope = {
  success: false;
  error: string;
  code: ErrorCode;
  timestamp: string;
  service: string;
  details?: unknown;
};

export type Envelope<T = unknown> = SuccessEnvelope<T> | ErrorEnvelope;

export function successEnvelope<T>(service: string, result: T): SuccessEnvelope<T> {
  return { success: true, result, timestamp: new Date().toISOString(), service };
}

export function errorEnvelope(service: string, err: AppError): ErrorEnvelope {
  const body: ErrorEnvelope = {
    success: false,
    error: err.message,
    code: err.code,
    timestamp: new Date().toISOString(),
    service,
  };
  if (err.details !== undefined) body.details = err.details;
  return body;
}

export type ToolErrorResult = { isError: true; content: { type: 'text'; text: string }[]; structuredContent: ErrorEnvelope };

/**
 * A tool's error as an MCP tool result, the one shape of every service and of the gateway: isError,
 * the error envelope as structuredContent and, for clients that read only content, as its text.
 */
export function toolErrorResult(service: string, err: AppError): ToolErrorResult {
  const body = errorEnvelope(service, err);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}
