/**
 * Text embedders shared by the services that rank text (advanced-memory-mcp's memories, the
 * gateway's tool discovery): a deterministic local one (feature hashing, no model) and an
 * OpenAI-compatible POST {url}/v1/embeddings client. `@mcp-fleet/kit/embedder`.
 */
import { z } from 'zod';
import { AppError } from './errors';

/** Lower-cased NFKC runs of letters and digits: the one tokenizer for embedding and text search. */
export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export interface Embedder {
  /** "local" or "openai-compatible". */
  readonly kind: string;
  /** Known up front for the local embedder; for a remote one only when configured. */
  readonly dimensions?: number;
  /** One vector per text, in order; never a zero vector (an error instead). */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
  describe(): Record<string, unknown>;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(s: string, seed = FNV_OFFSET): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/**
 * Deterministic feature hashing, no model: word unigrams (weight 1) and character trigrams of each
 * word with boundary marks (weight 0.5), sublinear term frequency, a hashed sign against
 * collision bias, L2-normalised. Same text, same vector; texts sharing words or word pieces score
 * higher. It captures lexical, not semantic, similarity.
 */
export class LocalEmbedder implements Embedder {
  readonly kind = 'local';

  constructor(readonly dimensions = 384) {}

  embedOne(text: string, index = 0): number[] {
    const features = new Map<string, number>();
    const add = (f: string, w: number) => features.set(f, (features.get(f) ?? 0) + w);
    for (const token of tokenize(text)) {
      add(`w:${token}`, 1);
      const padded = `^${token}$`;
      for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, 0.5);
    }
    if (features.size === 0) {
      throw new AppError('VALIDATION_ERROR', `Text ${index} has no letters or digits to embed; send some words.`, {
        details: [{ path: `texts.${index}`, message: 'nothing to embed' }],
      });
    }
    const v = new Float64Array(this.dimensions);
    for (const [feature, weight] of features) {
      const h = fnv1a(feature);
      const sign = fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1;
      v[h % this.dimensions] += sign * (weight >= 1 ? 1 + Math.log(weight) : weight);
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    if (norm === 0) {
      throw new AppError('VALIDATION_ERROR', `Text ${index} hashed to a zero vector; add a few more words.`);
    }
    const inv = 1 / Math.sqrt(norm);
    return Array.from(v, (x) => x * inv);
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t, i) => this.embedOne(t, i));
  }

  describe(): Record<string, unknown> {
    return { kind: this.kind, dimensions: this.dimensions };
  }
}

export interface OpenAIEmbedderOptions {
  url: string;
  model: string;
  apiKey?: string;
  dimensions?: number;
  timeoutMs: number;
  /** Largest accepted response body. */
  maxResponseBytes?: number;
  /** Prefix of the variables that configure it, named in its errors: `<prefix>_URL`, `_API_KEY`... (default EMBEDDINGS). */
  variablePrefix?: string;
}

const embeddingsResponse = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()).min(1).max(4096), index: z.number().int().min(0).optional() })).min(1),
});

/** POST {url}/v1/embeddings of an OpenAI-compatible server. Failures are UPSTREAM_* errors, never a zero vector. */
export class OpenAIEmbedder implements Embedder {
  readonly kind = 'openai-compatible';
  private readonly endpoint: string;

  constructor(private readonly options: OpenAIEmbedderOptions) {
    const base = options.url.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.endpoint = `${base}/v1/embeddings`;
  }

  get dimensions(): number | undefined {
    return this.options.dimensions;
  }

  describe(): Record<string, unknown> {
    return {
      kind: this.kind,
      endpoint: new URL(this.endpoint).origin,
      model: this.options.model,
      dimensions: this.options.dimensions ?? null,
    };
  }

  private variable(name: string): string {
    return `${this.options.variablePrefix ?? 'EMBEDDINGS'}_${name}`;
  }

  private fail(code: 'UPSTREAM_ERROR' | 'UPSTREAM_UNAVAILABLE', why: string, cause?: unknown): AppError {
    const key = this.options.apiKey;
    const message = `The embeddings endpoint ${new URL(this.endpoint).origin} ${why}`;
    return new AppError(code, key ? message.split(key).join('[redacted]') : message, { cause });
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let status: number;
    let raw: string;
    try {
      // a redirect is answered as its status (an operator's endpoint does not move silently)
      const res = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: combined,
        redirect: 'manual',
      });
      status = res.status;
      raw = res.body ? await readCapped(res.body, this.options.maxResponseBytes ?? 32 * 1024 * 1024) : '';
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      if (timeout.aborted) throw this.fail('UPSTREAM_UNAVAILABLE', `did not answer within ${this.options.timeoutMs} ms.`, err);
      if (err instanceof AppError) throw err;
      // fetch says "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND...) is its cause
      const why = ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;
      throw this.fail('UPSTREAM_UNAVAILABLE', `is unreachable (${why}); check ${this.variable('URL')}.`, err);
    }
    if (status === 429 || status >= 500) throw this.fail('UPSTREAM_UNAVAILABLE', `answered HTTP ${status}; retry later.`);
    if (status === 401 || status === 403)
      throw this.fail('UPSTREAM_ERROR', `refused the credentials (HTTP ${status}); check ${this.variable('API_KEY')}.`);
    if (status < 200 || status >= 300)
      throw this.fail('UPSTREAM_ERROR', `answered HTTP ${status}; check ${this.variable('URL')} and ${this.variable('MODEL')}.`);
    let parsed: z.output<typeof embeddingsResponse>;
    try {
      parsed = embeddingsResponse.parse(JSON.parse(raw));
    } catch (err) {
      throw this.fail('UPSTREAM_ERROR', 'answered with something other than {"data": [{"embedding": [numbers]}]}.', err);
    }
    if (parsed.data.length !== texts.length) {
      throw this.fail('UPSTREAM_ERROR', `returned ${parsed.data.length} embeddings for ${texts.length} texts.`);
    }
    const ordered = parsed.data.every((d) => d.index !== undefined) ? [...parsed.data].sort((a, b) => a.index! - b.index!) : parsed.data;
    const size = this.options.dimensions ?? ordered[0].embedding.length;
    return ordered.map((d, i) => {
      const v = d.embedding;
      if (v.length !== size)
        throw this.fail(
          'UPSTREAM_ERROR',
          `returned ${v.length} dimensions for text ${i}; expected ${size} (${this.variable('DIMENSIONS')}).`,
        );
      if (v.every((x) => x === 0)) throw this.fail('UPSTREAM_ERROR', `returned a zero vector for text ${i}; refusing to store it.`);
      if (v.some((x) => Math.abs(x) > 3.4e38))
        throw this.fail('UPSTREAM_ERROR', `returned values outside the float32 range for text ${i}.`);
      return v;
    });
  }
}

async function readCapped(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new AppError('UPSTREAM_ERROR', `The embeddings endpoint answered more than ${max} bytes.`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface EmbedderConfig {
  EMBEDDINGS_URL?: string;
  EMBEDDINGS_MODEL: string;
  EMBEDDINGS_API_KEY?: string;
  EMBEDDINGS_DIMENSIONS?: number;
  EMBEDDINGS_TIMEOUT_MS: number;
  LOCAL_EMBEDDING_DIMENSIONS: number;
}

export function createEmbedder(config: EmbedderConfig): Embedder {
  if (config.EMBEDDINGS_URL) {
    return new OpenAIEmbedder({
      url: config.EMBEDDINGS_URL,
      model: config.EMBEDDINGS_MODEL,
      apiKey: config.EMBEDDINGS_API_KEY,
      dimensions: config.EMBEDDINGS_DIMENSIONS,
      timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
    });
  }
  return new LocalEmbedder(config.LOCAL_EMBEDDING_DIMENSIONS);
}
