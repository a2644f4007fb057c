import { Pool } from 'undici';

/** Why a request to a downstream got no HTTP answer. */
export type FailureKind = 'refused' | 'connection' | 'timeout' | 'aborted';

function parseAnswer(status: number, text: string): DownstreamAnswer {
  try {
    return { status, json: JSON.parse(text) };
  } catch {
    return { status, json: undefined, problem: `a non-JSON answer (${JSON.stringify(text.slice(0, 80))})` };
  }
}

export class DownstreamFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** False when the request certainly never reached the downstream (safe to send elsewhere). */
    readonly delivered: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DownstreamFailure';
  }
}

export interface DownstreamAnswer {
  status: number;
  /** Parsed JSON, or undefined when the answer was not JSON. */
  json: unknown;
  /** Set when the answer could not be read as JSON (short excerpt, for the error message). */
  problem?: string;
}

export interface DownstreamRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  requestId?: string;
  /** W3C traceparent of the gateway's span for this call. */
  traceparent?: string;
  timeoutMs: number;
  /** Aborted when the caller goes away. */
  signal?: AbortSignal;
  /** Asks the downstream to stream its progress (NDJSON) and receives each report. */
  onProgress?: ProgressListener;
}

export type ProgressListener = (progress: number, total?: number, message?: string) => void;

const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const TIMEOUT = Symbol('timeout');

/** What the registry and the dispatcher talk to: an HTTP service of the kit, or an MCP server behind an adapter. */
export interface Downstream {
  /** Where it is, safe to show (no credentials). */
  readonly url: string;
  readonly port: number;
  request(req: DownstreamRequest): Promise<DownstreamAnswer>;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/** URL without credentials or query string, safe to show in /services and errors. */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid url)';
  }
}

/**
 * A kit service's progress stream: NDJSON lines {"progress", "total"?, "message"?} as the work goes,
 * then {"status", "envelope"}; the answer is that last line's status and envelope.
 */
async function readProgressStream(
  body: AsyncIterable<Buffer | Uint8Array> & { destroy(): void },
  onProgress: ProgressListener,
  maxBytes: number,
): Promise<DownstreamAnswer> {
  let buffered = '';
  let size = 0;
  let final: { status?: unknown; envelope?: unknown } | undefined;
  const take = (text: string) => {
    if (!text.trim()) return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof v.progress === 'number') {
      onProgress(v.progress, typeof v.total === 'number' ? v.total : undefined, typeof v.message === 'string' ? v.message : undefined);
    } else if ('envelope' in v) final = v;
  };
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return { status: 502, json: undefined, problem: `an answer larger than ${maxBytes} bytes` };
    }
    buffered += Buffer.from(chunk).toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      take(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  take(buffered);
  if (!final || typeof final.status !== 'number')
    return { status: 502, json: undefined, problem: 'a progress stream without its final answer' };
  return { status: final.status, json: final.envelope };
}

/** One downstream: a keep-alive undici Pool plus the base path and credentials of its URL. */
export class DownstreamClient implements Downstream {
  readonly url: string;
  readonly port: number;
  private readonly basePath: string;
  private readonly authorization?: string;
  private readonly pool: Pool;

  constructor(
    rawUrl: string,
    private readonly options: { connections: number; maxResponseBytes: number; connectTimeoutMs: number; headers?: Record<string, string> },
  ) {
    const u = new URL(rawUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`downstream URL must be http(s), got ${u.protocol}`);
    this.url = displayUrl(rawUrl);
    this.port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    this.basePath = u.pathname.replace(/\/+$/, '');
    if (u.username || u.password) {
      this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    }
    this.pool = new Pool(u.origin, {
      connections: options.connections,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connect: { timeout: options.connectTimeoutMs },
      // The gateway's own timer bounds the whole call; these only stop sockets hanging forever.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  async request(req: DownstreamRequest): Promise<DownstreamAnswer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMEOUT), req.timeoutMs);
    const onAbort = () => controller.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    if (req.requestId) headers['x-request-id'] = req.requestId;
    if (req.traceparent) headers.traceparent = req.traceparent;
    if (this.authorization) headers.authorization = this.authorization;
    if (req.onProgress) headers['x-progress'] = 'ndjson';
    if (this.options.headers) Object.assign(headers, this.options.headers);
    try {
      const res = await this.pool.request({
        method: req.method,
        path: this.basePath + req.path,
        headers,
        body: req.body,
        signal: controller.signal,
      });
      const type = String(res.headers['content-type'] ?? '');
      if (req.onProgress && type.startsWith('application/x-ndjson'))
        return await readProgressStream(res.body, req.onProgress, this.options.maxResponseBytes);
      // A declared length within the limit is read in one go (undici's own collector, no async
      // iterator); anything else is streamed and cut off at the limit.
      const declared = Number(res.headers['content-length']);
      if (Number.isInteger(declared) && declared <= this.options.maxResponseBytes)
        return parseAnswer(res.statusCode, await res.body.text());
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.options.maxResponseBytes) {
          res.body.destroy();
          return { status: res.statusCode, json: undefined, problem: `an answer larger than ${this.options.maxResponseBytes} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      return parseAnswer(res.statusCode, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      throw this.classify(err, controller.signal, req.timeoutMs);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  private classify(err: unknown, signal: AbortSignal, timeoutMs: number): DownstreamFailure {
    if (signal.aborted) {
      if (signal.reason === TIMEOUT) return new DownstreamFailure('timeout', `timed out after ${timeoutMs} ms`, true, { cause: err });
      return new DownstreamFailure('aborted', 'the caller went away', true, { cause: err });
    }
    const code = (err as { code?: string }).code ?? '';
    if (NOT_DELIVERED.has(code)) {
      const what = code === 'ECONNREFUSED' ? 'connection refused' : code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connect timed out' : code;
      return new DownstreamFailure('refused', `${what} at ${this.url}`, false, { cause: err });
    }
    return new DownstreamFailure('connection', `connection failed at ${this.url} (${code || (err as Error).message})`, true, {
      cause: err,
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
