// The console's calls to its API (/console/api, same origin): JSON in and out, the session's CSRF
// token on every write, and one place that notices a session that ended (401 -> the login form).
/* global fetch, crypto */

let csrf;
let onLoggedOut = () => undefined;

export function setCsrf(token) {
  csrf = token;
}

export function whenLoggedOut(fn) {
  onLoggedOut = fn;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.body = body;
  }
}

/** One request: {status, body, headers}, whatever the status. */
export async function request(path, options = {}) {
  const method = options.method || 'GET';
  const headers = { accept: 'application/json', ...(options.headers || {}) };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-console-csrf'] = csrf;
  const res = await fetch(`/console/api${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = { error: text.slice(0, 500) };
  }
  if (res.status === 401 && path !== '/login') onLoggedOut();
  return { status: res.status, body, headers: res.headers };
}

/** A request whose failure is an ApiError (for everything but tool calls, whose errors are results). */
export async function api(path, options) {
  const out = await request(path, options);
  if (out.status >= 400) throw new ApiError(out.status, out.body);
  return out.body;
}

/** A W3C traceparent for a call made here: its trace id names the call in the gateway's and the services' logs and traces. */
export function newTraceparent() {
  const hex = (n) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  return { traceId, traceparent: `00-${traceId}-${hex(8)}-01` };
}
