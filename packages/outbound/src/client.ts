import net from 'node:net';
import tls from 'node:tls';
import { AppError, lazy, type Logger } from '@mcp-fleet/kit';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import type * as UndiciModule from 'undici';
import { normalizeHost } from './ip';
import type { OutboundPolicy } from './policy';

type Undici = typeof UndiciModule;
/** undici, loaded at the first request: a service that never calls out does not hold it (some 5 MB of heap). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const undici = lazy(() => require('undici') as Undici);

export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Headers a caller may not set: undici owns framing and connection handling. */
const FORBIDDEN_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
/** Dropped when a redirect leaves the original origin, so credentials do not follow it. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface OutboundClientOptions {
  policy: OutboundPolicy;
  logger?: Logger;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  ca?: string;
  connectTimeoutMs?: number;
  userAgent?: string;
}

export interface OutboundRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Deadline for the whole exchange, every redirect hop and the body included. */
  timeoutMs?: number;
  /** Follow 3xx responses (each hop checked by the policy). Default true. */
  followRedirects?: boolean;
  /** More hops than this fails with UPSTREAM_ERROR. Default 5. */
  maxRedirects?: number;
  /** Bytes of the final body kept; the rest is cut and `truncated` set. Default 1 MiB. */
  maxResponseBytes?: number;
  signal?: AbortSignal;
}

export interface RedirectHop {
  url: string;
  status: number;
  location: string;
  durationMs: number;
}

export interface OutboundResponse {
  url: string;
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  bodyBytes: number;
  truncated: boolean;
  redirects: RedirectHop[];
  timing: { totalMs: number; firstByteMs: number };
}

/** The URL with no user info and no query, for logs (query strings often carry keys). */
export function urlForLog(url: URL | string): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

/** Parses a caller's URL: absolute, http or https, no embedded credentials. */
export function parseOutboundUrl(input: string, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new AppError('VALIDATION_ERROR', `${field} is not an absolute URL; send one such as https://example.com/path.`, {
      details: [{ path: field, message: 'invalid URL' }],
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('VALIDATION_ERROR', `${field} uses ${url.protocol}; only http: and https: are supported.`, {
      details: [{ path: field, message: 'unsupported scheme' }],
    });
  }
  if (url.username || url.password) {
    throw new AppError('VALIDATION_ERROR', `${field} carries credentials; send them in an Authorization header instead.`, {
      details: [{ path: field, message: 'credentials in URL' }],
    });
  }
  return url;
}

/** Checks caller-supplied headers; returns them with lower-case names. */
export function checkRequestHeaders(headers: Record<string, string> = {}, field = 'headers'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) {
      throw new AppError('VALIDATION_ERROR', `Header name ${JSON.stringify(name)} is not a valid HTTP token.`, {
        details: [{ path: `${field}.${name}`, message: 'invalid header name' }],
      });
    }
    if (FORBIDDEN_REQUEST_HEADERS.has(lower)) {
      throw new AppError('VALIDATION_ERROR', `Header ${name} is set by the client itself; remove it.`, {
        details: [{ path: `${field}.${name}`, message: 'header not allowed' }],
      });
    }
    if (/[\r\n\0]/.test(value)) {
      throw new AppError('VALIDATION_ERROR', `Header ${name} contains a line break or NUL; remove it.`, {
        details: [{ path: `${field}.${name}`, message: 'invalid header value' }],
      });
    }
    out[lower] = value;
  }
  return out;
}

function errorCode(err: unknown): string | undefined {
  let e = err as { code?: string; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as typeof e) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

function findAppError(err: unknown): AppError | undefined {
  let e = err as { cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as typeof e) {
    if (e instanceof AppError) return e;
  }
  return undefined;
}

/** Maps a failed outbound exchange to the fleet's codes, with a message that names only the origin. */
export function toOutboundError(err: unknown, url: URL, timeoutMs?: number): AppError {
  const known = findAppError(err);
  if (known) return known;
  const where = url.host;
  const code = errorCode(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new AppError(
        'TIMEOUT',
        `${where} did not answer in time${timeoutMs ? ` (${timeoutMs} ms)` : ''}; raise timeoutMs or try later.`,
        { cause: err },
      );
    case 'ECONNREFUSED':
      return new AppError('UPSTREAM_UNAVAILABLE', `${where} refused the connection; check the host and port.`, { cause: err });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'ENODATA':
      return new AppError('UPSTREAM_UNAVAILABLE', `The host ${url.hostname} could not be resolved; check the name.`, { cause: err });
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new AppError('UPSTREAM_UNAVAILABLE', `${where} is unreachable from this host.`, { cause: err });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new AppError('UPSTREAM_ERROR', `${where} closed the connection before answering completely.`, { cause: err });
    case 'UND_ERR_INVALID_ARG':
      return new AppError('VALIDATION_ERROR', `The request to ${where} was refused by the HTTP client: ${(err as Error).message}.`, {
        cause: err,
      });
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_HEADER_OVERFLOW':
    case 'UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE':
      return new AppError('UPSTREAM_ERROR', `${where} sent a malformed HTTP response.`, { cause: err });
    default:
      if (code && (/^(ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_SSL_)/.test(code) || code.includes('CERT'))) {
        return new AppError('UPSTREAM_ERROR', `The TLS certificate of ${where} is not trusted (${code}); ssl_check shows the chain.`, {
          cause: err,
        });
      }
      return new AppError('UPSTREAM_ERROR', `The request to ${where} failed${code ? ` (${code})` : ''}.`, { cause: err });
  }
}

/** Reads a body stream, keeping at most `cap` bytes; the rest is discarded and the stream closed. */
export async function readCapped(body: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void }, cap: number) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  for await (const raw of body) {
    const chunk = Buffer.from(raw);
    if (bytes + chunk.length > cap) {
      chunks.push(chunk.subarray(0, cap - bytes));
      bytes = cap;
      truncated = true;
      break;
    }
    chunks.push(chunk);
    bytes += chunk.length;
  }
  if (truncated) body.destroy?.();
  return { body: Buffer.concat(chunks), bytes, truncated };
}

/**
 * HTTP client that can only reach what the policy allows: the undici connector checks literal IPs,
 * and its DNS lookup is the policy's, so the address checked is the address connected to.
 * Redirects are followed here, hop by hop, so every hop meets the same checks.
 */
export class OutboundClient {
  readonly policy: OutboundPolicy;
  private agentInstance?: Agent;
  private readonly logger?: Logger;
  private readonly userAgent: string;

  constructor(private readonly options: OutboundClientOptions) {
    this.policy = options.policy;
    this.logger = options.logger;
    this.userAgent = options.userAgent ?? 'mcp-fleet-outbound/0.1';
  }

  /** Made at the first request (with undici itself). */
  private get agent(): Agent {
    return (this.agentInstance ??= this.createAgent());
  }

  private createAgent(): Agent {
    const { Agent, buildConnector } = undici();
    const base = buildConnector({
      timeout: this.options.connectTimeoutMs ?? 10_000,
      lookup: this.policy.lookup,
      ...(this.options.ca ? { ca: [...tls.rootCertificates, this.options.ca] } : {}),
    } as buildConnector.BuildOptions);
    return new Agent({
      connect: (opts, callback) => {
        const host = normalizeHost(opts.hostname);
        if (net.isIP(host)) {
          try {
            this.policy.assertAddress(host, host);
          } catch (err) {
            callback(err as Error, null);
            return;
          }
        }
        base(opts, callback);
      },
    });
  }

  /** The policy-bound undici dispatcher, for callers that need undici directly. */
  get dispatcher(): Dispatcher {
    return this.agent;
  }

  async request(rawUrl: string | URL, options: OutboundRequestOptions = {}): Promise<OutboundResponse> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const maxRedirects = options.maxRedirects ?? 5;
    const cap = options.maxResponseBytes ?? 1024 * 1024;
    const follow = options.followRedirects ?? true;
    let url = typeof rawUrl === 'string' ? parseOutboundUrl(rawUrl) : rawUrl;
    let method = (options.method ?? 'GET').toUpperCase();
    let body = options.body;
    let headers: Record<string, string> = { 'user-agent': this.userAgent, ...checkRequestHeaders(options.headers) };
    const firstOrigin = url.origin;
    const redirects: RedirectHop[] = [];

    const controller = new AbortController();
    const timeoutError = new AppError('TIMEOUT', `No complete answer within ${timeoutMs} ms; raise timeoutMs or try later.`);
    const timer = setTimeout(() => controller.abort(timeoutError), timeoutMs);
    const onOuterAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    const started = performance.now();
    try {
      for (;;) {
        this.policy.assertHost(url.hostname);
        const hopStarted = performance.now();
        let res: Dispatcher.ResponseData;
        try {
          res = await undici().request(url, {
            dispatcher: this.agent,
            method: method as Dispatcher.HttpMethod,
            headers,
            body,
            signal: controller.signal,
          });
        } catch (err) {
          if (controller.signal.aborted)
            throw controller.signal.reason === timeoutError ? timeoutError : toOutboundError(controller.signal.reason, url);
          throw toOutboundError(err, url, timeoutMs);
        }
        const location = res.headers.location;
        if (follow && REDIRECT_STATUSES.has(res.statusCode) && typeof location === 'string' && location !== '') {
          await res.body.dump().catch(() => undefined);
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw new AppError('UPSTREAM_ERROR', `${url.host} redirected to an invalid Location.`, { details: { redirects } });
          }
          redirects.push({
            url: url.href,
            status: res.statusCode,
            location: next.href,
            durationMs: Math.round(performance.now() - hopStarted),
          });
          if (next.protocol !== 'http:' && next.protocol !== 'https:') {
            throw new AppError('UPSTREAM_ERROR', `${url.host} redirected to a ${next.protocol} URL; only http and https are followed.`, {
              details: { redirects },
            });
          }
          if (redirects.length > maxRedirects) {
            throw new AppError('UPSTREAM_ERROR', `More than ${maxRedirects} redirects; raise maxRedirects or request the final URL.`, {
              details: { redirects },
            });
          }
          if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
            if (method !== 'HEAD') method = 'GET';
            body = undefined;
            delete headers['content-type'];
          }
          if (next.origin !== firstOrigin) {
            headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k)));
          }
          next.username = '';
          next.password = '';
          url = next;
          continue;
        }
        const firstByteMs = Math.round(performance.now() - started);
        let read: Awaited<ReturnType<typeof readCapped>>;
        try {
          read = method === 'HEAD' ? { body: Buffer.alloc(0), bytes: 0, truncated: false } : await readCapped(res.body, cap);
        } catch (err) {
          if (controller.signal.aborted)
            throw controller.signal.reason === timeoutError ? timeoutError : toOutboundError(controller.signal.reason, url);
          throw toOutboundError(err, url, timeoutMs);
        }
        const totalMs = Math.round(performance.now() - started);
        this.logger?.debug('outbound request', {
          method,
          url: urlForLog(url),
          status: res.statusCode,
          hops: redirects.length,
          ms: totalMs,
        });
        return {
          url: url.href,
          status: res.statusCode,
          headers: res.headers as Record<string, string | string[]>,
          body: read.body,
          bodyBytes: read.bytes,
          truncated: read.truncated,
          redirects,
          timing: { totalMs, firstByteMs },
        };
      }
    } catch (err) {
      const appErr = err instanceof AppError ? err : toOutboundError(err, url, timeoutMs);
      // A refusal found at connect time on a redirect hop still reports the chain that led there.
      if (redirects.length && appErr.code === 'FORBIDDEN' && !(appErr.details as { redirects?: unknown })?.redirects) {
        throw new AppError('FORBIDDEN', `Redirect hop ${redirects.length} refused. ${appErr.message}`, {
          details: { ...(appErr.details as object), redirects },
        });
      }
      this.logger?.debug('outbound request failed', { method, url: urlForLog(url), code: appErr.code });
      throw appErr;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  async close(): Promise<void> {
    await this.agentInstance?.close();
  }
}
