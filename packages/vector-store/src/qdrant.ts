import { AppError, lazy } from '@mcp-fleet/kit';
import type * as QdrantModule from '@qdrant/js-client-rest';
import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { parsePointId, type PointId } from './ids';
import {
  DEFAULT_LIMITS,
  DISTANCES,
  type CollectionInfo,
  type CollectionSpec,
  type DeleteSelector,
  type Distance,
  type FetchOptions,
  type Filter,
  type Payload,
  type PointInput,
  type PointUpdate,
  type ScoredPoint,
  type ScrollPage,
  type ScrollRequest,
  type SearchRequest,
  type StoredPoint,
  type VectorStore,
  type VectorStoreLimits,
} from './types';
import {
  checkCollectionName,
  checkCount,
  checkFilter,
  checkIds,
  checkLimit,
  checkPayload,
  checkSpec,
  checkThreshold,
  checkVector,
  conflict,
  normalise,
  notFound,
} from './validate';

export interface QdrantVectorStoreOptions {
  url: string;
  apiKey?: string;
  /** Per-request time limit. */
  timeoutMs?: number;
  limits?: Partial<VectorStoreLimits>;
}

type QdrantPoint = { id: string | number; payload?: Record<string, unknown> | null; vector?: unknown; score?: number };

/* eslint-disable @typescript-eslint/no-require-imports */
/** Qdrant's client (and undici under it: 4.9 MiB of heap), loaded by the first QdrantVectorStore: a service on the embedded store never holds it. */
const qdrant = lazy(() => require('@qdrant/js-client-rest') as typeof QdrantModule);
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The same VectorStore over a Qdrant server. Inputs are checked here with the embedded store's
 * rules before anything is sent, so both answer bad input with the same codes and messages.
 */
export class QdrantVectorStore implements VectorStore {
  readonly kind = 'qdrant' as const;
  readonly limits: VectorStoreLimits;
  private readonly client: QdrantClient;
  private readonly origin: string;
  private readonly specs = new Map<string, CollectionSpec>();

  constructor(options: QdrantVectorStoreOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    const url = new URL(options.url);
    this.origin = url.origin;
    this.client = new (qdrant().QdrantClient)({
      url: options.url,
      apiKey: options.apiKey,
      timeout: options.timeoutMs ?? 30_000,
      checkCompatibility: false,
    });
  }

  /** One place that turns client errors into AppError; the API key is never part of a message. */
  private async call<T>(fn: () => Promise<T>, collection?: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.mapError(err, collection);
    }
  }

  private mapError(err: unknown, collection?: string): AppError {
    if (err instanceof AppError) return err;
    const { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } = qdrant();
    if (err instanceof QdrantClientResourceExhaustedError) {
      return new AppError('RATE_LIMITED', 'Qdrant is rate limiting requests; retry later.', { cause: err, retryAfter: err.retry_after });
    }
    if (err instanceof QdrantClientTimeoutError) {
      return new AppError('TIMEOUT', `Qdrant at ${this.origin} did not answer in time.`, { cause: err });
    }
    if (err instanceof QdrantClientUnexpectedResponseError) {
      const status = Number(/Unexpected Response: (\d{3})/.exec(err.message)?.[1] ?? 0);
      const raw = /Raw response content:\n([\s\S]*)$/.exec(err.message)?.[1] ?? '';
      const reason = /"error"\s*:\s*"([^"]{1,300})/.exec(raw)?.[1] ?? `HTTP ${status}`;
      if (status === 404) {
        if (collection) {
          this.specs.delete(collection);
          return notFound(collection);
        }
        return new AppError('NOT_FOUND', `Qdrant: ${reason}`, { cause: err });
      }
      if (status === 409 || /already exists/i.test(reason)) {
        return collection ? conflict(collection) : new AppError('CONFLICT', `Qdrant: ${reason}`, { cause: err });
      }
      if (status === 400 || status === 422)
        return new AppError('VALIDATION_ERROR', `Qdrant refused the request: ${reason}`, { cause: err });
      if (status === 401 || status === 403) {
        return new AppError('UPSTREAM_ERROR', `Qdrant at ${this.origin} refused the credentials (HTTP ${status}); check QDRANT_API_KEY.`, {
          cause: err,
        });
      }
      if (status === 429) return new AppError('RATE_LIMITED', 'Qdrant is rate limiting requests; retry later.', { cause: err });
      return new AppError('UPSTREAM_ERROR', `Qdrant at ${this.origin} failed: ${reason}`, { cause: err });
    }
    return new AppError(
      'UPSTREAM_UNAVAILABLE',
      `Qdrant at ${this.origin} is unreachable (${(err as Error)?.message ?? 'unknown error'}).`,
      {
        cause: err,
      },
    );
  }

  private async spec(name: string): Promise<CollectionSpec> {
    const checked = checkCollectionName(name);
    const cached = this.specs.get(checked);
    if (cached) return cached;
    const info = await this.collectionInfo(checked);
    return { name: info.name, size: info.size, distance: info.distance };
  }

  private toPoint(p: QdrantPoint, options: FetchOptions): StoredPoint {
    const out: StoredPoint = { id: p.id };
    if (options.withPayload ?? true) out.payload = (p.payload ?? {}) as Payload;
    if (options.withVectors && Array.isArray(p.vector)) out.vector = p.vector as number[];
    return out;
  }

  async createCollection(spec: CollectionSpec): Promise<CollectionInfo> {
    const checked = checkSpec(spec);
    const exists = await this.call(() => this.client.collectionExists(checked.name));
    if (exists.exists) throw conflict(checked.name);
    await this.call(
      () => this.client.createCollection(checked.name, { vectors: { size: checked.size, distance: checked.distance } }),
      checked.name,
    );
    this.specs.set(checked.name, checked);
    return { ...checked, pointsCount: 0 };
  }

  async deleteCollection(name: string): Promise<boolean> {
    const checked = checkCollectionName(name);
    this.specs.delete(checked);
    const exists = await this.call(() => this.client.collectionExists(checked));
    if (!exists.exists) return false;
    await this.call(() => this.client.deleteCollection(checked), checked);
    return true;
  }

  async listCollections(): Promise<string[]> {
    const res = await this.call(() => this.client.getCollections());
    return res.collections.map((c) => c.name).sort();
  }

  async collectionInfo(name: string): Promise<CollectionInfo> {
    const checked = checkCollectionName(name);
    const info = await this.call(() => this.client.getCollection(checked), checked);
    const vectors = info.config?.params?.vectors as { size?: unknown; distance?: unknown } | undefined;
    if (!vectors || typeof vectors.size !== 'number' || !DISTANCES.includes(vectors.distance as Distance)) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Qdrant collection "${checked}" uses named vectors or a distance other than Cosine, Euclid or Dot; this service handles one unnamed vector per point.`,
      );
    }
    const spec: CollectionSpec = { name: checked, size: vectors.size, distance: vectors.distance as Distance };
    this.specs.set(checked, spec);
    const counted = await this.call(() => this.client.count(checked, { exact: true }), checked);
    return { ...spec, pointsCount: counted.count };
  }

  async hasCollection(name: string): Promise<boolean> {
    const checked = checkCollectionName(name);
    return (await this.call(() => this.client.collectionExists(checked))).exists;
  }

  async upsert(collection: string, points: PointInput[]): Promise<{ upserted: number }> {
    if (!Array.isArray(points) || points.length === 0) {
      throw new AppError('VALIDATION_ERROR', 'points must be a non-empty array.', {
        details: [{ path: 'points', message: 'non-empty array' }],
      });
    }
    checkCount(points.length, this.limits, 'points');
    const spec = await this.spec(collection);
    const body = points.map((p, i) => {
      const id = parsePointId(p?.id, `points.${i}.id`);
      const vector = checkVector(p.vector, spec.size, spec.name, `points.${i}.vector`);
      if (spec.distance === 'Cosine') normalise(vector);
      const payload = checkPayload(p.payload, this.limits, `points.${i}.payload`).value;
      return { id, vector: Array.from(vector), payload };
    });
    await this.call(() => this.client.upsert(spec.name, { wait: true, points: body }), spec.name);
    return { upserted: body.length };
  }

  async update(
    collection: string,
    points: PointUpdate[],
    options: { payloadMode?: 'merge' | 'replace' } = {},
  ): Promise<{ updated: number }> {
    if (!Array.isArray(points) || points.length === 0) {
      throw new AppError('VALIDATION_ERROR', 'points must be a non-empty array.', {
        details: [{ path: 'points', message: 'non-empty array' }],
      });
    }
    checkCount(points.length, this.limits, 'points');
    const mode = options.payloadMode ?? 'merge';
    const spec = await this.spec(collection);
    const ids = points.map((p, i) => parsePointId(p?.id, `points.${i}.id`));
    const existing = await this.call(
      () => this.client.retrieve(spec.name, { ids: [...new Set(ids)], with_payload: true, with_vector: false }),
      spec.name,
    );
    const current = new Map<PointId, Payload>(existing.map((p) => [p.id, (p.payload ?? {}) as Payload]));
    const missing = [...new Set(ids)].filter((id) => !current.has(id));
    const pending = new Map<PointId, { vector?: number[]; payload?: Payload }>();
    for (const [i, p] of points.entries()) {
      const id = ids[i];
      if (p.vector === undefined && p.payload === undefined) {
        throw new AppError('VALIDATION_ERROR', `points.${i} changes nothing; give a vector, a payload or both.`, {
          details: [{ path: `points.${i}`, message: 'vector or payload required' }],
        });
      }
      if (!current.has(id)) continue;
      const entry = pending.get(id) ?? {};
      if (p.vector !== undefined) {
        const v = checkVector(p.vector, spec.size, spec.name, `points.${i}.vector`);
        if (spec.distance === 'Cosine') normalise(v);
        entry.vector = Array.from(v);
      }
      if (p.payload !== undefined) {
        const incoming = checkPayload(p.payload, this.limits, `points.${i}.payload`).value;
        const base = entry.payload ?? current.get(id)!;
        entry.payload = checkPayload(mode === 'merge' ? { ...base, ...incoming } : incoming, this.limits, `points.${i}.payload`).value;
      }
      pending.set(id, entry);
    }
    if (missing.length > 0) {
      throw new AppError(
        'NOT_FOUND',
        `No point with id ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', ...' : ''} in "${spec.name}"; nothing was updated. Upsert creates points.`,
        { details: missing.slice(0, 100).map((id) => ({ path: 'points', message: `unknown id ${id}` })) },
      );
    }
    const operations: Schemas['UpdateOperation'][] = [];
    const vectors = [...pending].filter(([, u]) => u.vector).map(([id, u]) => ({ id, vector: u.vector! }));
    if (vectors.length > 0) operations.push({ update_vectors: { points: vectors } });
    for (const [id, u] of pending) if (u.payload) operations.push({ overwrite_payload: { payload: u.payload, points: [id] } });
    await this.call(() => this.client.batchUpdate(spec.name, { wait: true, operations }), spec.name);
    return { updated: pending.size };
  }

  async delete(collection: string, selector: DeleteSelector): Promise<{ deleted: number }> {
    const byIds = selector && 'ids' in selector ? checkIds(selector.ids, this.limits) : undefined;
    const filter = byIds ? undefined : checkFilter((selector as { filter?: unknown })?.filter);
    if (!byIds && (!filter || Object.keys(filter).length === 0)) {
      throw new AppError(
        'VALIDATION_ERROR',
        'Delete needs ids or a filter with at least one condition; to remove every point, delete the collection.',
        {
          details: [{ path: 'filter', message: 'ids or a non-empty filter required' }],
        },
      );
    }
    const name = checkCollectionName(collection);
    if (byIds) {
      const unique = [...new Set(byIds)];
      const found = await this.call(() => this.client.retrieve(name, { ids: unique, with_payload: false, with_vector: false }), name);
      if (found.length === 0) return { deleted: 0 };
      await this.call(() => this.client.delete(name, { wait: true, points: found.map((p) => p.id) }), name);
      return { deleted: found.length };
    }
    const qf = filter as unknown as Schemas['Filter'];
    const n = (await this.call(() => this.client.count(name, { filter: qf, exact: true }), name)).count;
    if (n === 0) return { deleted: 0 };
    await this.call(() => this.client.delete(name, { wait: true, filter: qf }), name);
    return { deleted: n };
  }

  async fetch(collection: string, ids: PointId[], options: FetchOptions = {}): Promise<StoredPoint[]> {
    const checked = checkIds(ids, this.limits);
    const name = checkCollectionName(collection);
    const unique = [...new Set(checked)];
    const found = await this.call(
      () =>
        this.client.retrieve(name, { ids: unique, with_payload: options.withPayload ?? true, with_vector: options.withVectors ?? false }),
      name,
    );
    const byId = new Map(found.map((p) => [p.id, p]));
    return unique.filter((id) => byId.has(id)).map((id) => this.toPoint(byId.get(id) as QdrantPoint, options));
  }

  async search(collection: string, request: SearchRequest): Promise<ScoredPoint[]> {
    const spec = await this.spec(collection);
    const vector = checkVector(request?.vector, spec.size, spec.name, 'vector');
    const limit = checkLimit(request.limit, this.limits.maxSearchLimit, 10);
    const filter = checkFilter(request.filter);
    const threshold = checkThreshold(request.scoreThreshold);
    const options = { withPayload: request.withPayload ?? true, withVectors: request.withVectors ?? false };
    const res = await this.call(
      () =>
        this.client.query(spec.name, {
          query: Array.from(vector),
          limit,
          ...(filter ? { filter: filter as unknown as Schemas['Filter'] } : {}),
          ...(threshold !== undefined ? { score_threshold: threshold } : {}),
          with_payload: options.withPayload,
          with_vector: options.withVectors,
        }),
      spec.name,
    );
    return res.points.map((p) => ({ ...this.toPoint(p as QdrantPoint, options), score: p.score }));
  }

  async scroll(collection: string, request: ScrollRequest = {}): Promise<ScrollPage> {
    const name = checkCollectionName(collection);
    const limit = checkLimit(request.limit, this.limits.maxScrollLimit, 10);
    const filter = checkFilter(request.filter);
    const offset = request.offset === undefined ? undefined : parsePointId(request.offset, 'offset');
    const options = { withPayload: request.withPayload ?? true, withVectors: request.withVectors ?? false };
    const res = await this.call(
      () =>
        this.client.scroll(name, {
          limit,
          ...(filter ? { filter: filter as unknown as Schemas['Filter'] } : {}),
          ...(offset !== undefined ? { offset } : {}),
          with_payload: options.withPayload,
          with_vector: options.withVectors,
        }),
      name,
    );
    const next = res.next_page_offset;
    return {
      points: res.points.map((p) => this.toPoint(p as QdrantPoint, options)),
      ...(typeof next === 'number' || typeof next === 'string' ? { nextOffset: next } : {}),
    };
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    const name = checkCollectionName(collection);
    const checked = checkFilter(filter);
    const res = await this.call(
      () => this.client.count(name, { exact: true, ...(checked ? { filter: checked as unknown as Schemas['Filter'] } : {}) }),
      name,
    );
    return res.count;
  }

  async health(): Promise<Record<string, unknown>> {
    const res = await this.call(() => this.client.getCollections());
    return { backend: 'qdrant', url: this.origin, collections: res.collections.length };
  }

  async close(): Promise<void> {
    this.specs.clear();
  }
}
