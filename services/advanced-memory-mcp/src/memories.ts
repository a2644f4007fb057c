import { AppError } from '@mcp-fleet/kit';
import type { CollectionSpec, Filter, Payload, PointId, ScoredPoint, StoredPoint, VectorStore } from '@mcp-fleet/vector-store';
import type { Embedder } from './embedder';

/** What a memory point carries as payload. */
export interface MemoryPayload {
  content: string;
  type: string;
  tags: string[];
  importance: number;
  metadata: Record<string, unknown>;
  createdAt: string;
  /** Epoch milliseconds of createdAt, so range filters can select by time. */
  createdAtMs: number;
}

export interface Memory extends Omit<MemoryPayload, 'createdAtMs'> {
  id: PointId;
}

export function toMemory(p: StoredPoint): Memory {
  const payload = (p.payload ?? {}) as Partial<MemoryPayload>;
  return {
    id: p.id,
    content: String(payload.content ?? ''),
    type: String(payload.type ?? 'note'),
    tags: Array.isArray(payload.tags) ? payload.tags.map(String) : [],
    importance: typeof payload.importance === 'number' ? payload.importance : 0.5,
    metadata: payload.metadata && typeof payload.metadata === 'object' ? (payload.metadata as Record<string, unknown>) : {},
    createdAt: String(payload.createdAt ?? ''),
  };
}

/**
 * Memories as points of one collection of the shared vector store (Cosine). The collection is
 * created on first write with the embedder's dimension; a collection of another size is a
 * configuration error, reported, never silently mixed.
 */
export class MemoryBank {
  private spec?: CollectionSpec;

  constructor(
    readonly store: VectorStore,
    readonly embedder: Embedder,
    readonly collection: string,
    readonly scanLimit: number,
  ) {}

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    return this.embedder.embed(texts, signal);
  }

  /** The collection, or undefined while nothing has been stored. */
  async existing(): Promise<CollectionSpec | undefined> {
    if (this.spec) return this.spec;
    if (!(await this.store.hasCollection(this.collection))) return undefined;
    const info = await this.store.collectionInfo(this.collection);
    this.spec = { name: info.name, size: info.size, distance: info.distance };
    return this.spec;
  }

  async ensure(size: number): Promise<CollectionSpec> {
    let spec = await this.existing();
    if (!spec) {
      try {
        await this.store.createCollection({ name: this.collection, size, distance: 'Cosine' });
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      }
      this.spec = undefined;
      spec = (await this.existing())!;
    }
    if (spec.size !== size) {
      throw new AppError(
        'NOT_CONFIGURED',
        `Collection "${this.collection}" holds ${spec.size}-dimensional vectors but the embedder produces ${size}; use the embedder it was built with or set MEMORY_COLLECTION to a new collection.`,
      );
    }
    return spec;
  }

  async add(payload: MemoryPayload, id: string, signal?: AbortSignal): Promise<{ id: string; dimensions: number }> {
    const [vector] = await this.embed([payload.content], signal);
    await this.ensure(vector.length);
    await this.store.upsert(this.collection, [{ id, vector, payload: payload as unknown as Payload }]);
    return { id, dimensions: vector.length };
  }

  async get(id: PointId): Promise<StoredPoint | undefined> {
    if (!(await this.existing())) return undefined;
    const [p] = await this.store.fetch(this.collection, [id], { withPayload: true, withVectors: true });
    return p;
  }

  async search(
    vector: number[],
    options: { limit: number; filter?: Filter; scoreThreshold?: number; withVectors?: boolean },
  ): Promise<ScoredPoint[]> {
    if (!(await this.existing())) return [];
    return this.store.search(this.collection, { vector, ...options, withPayload: true });
  }

  /** Every memory matching the filter, up to the scan limit. */
  async scan(filter: Filter | undefined, signal?: AbortSignal): Promise<{ points: StoredPoint[]; truncated: boolean }> {
    if (!(await this.existing())) return { points: [], truncated: false };
    const points: StoredPoint[] = [];
    let offset: PointId | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const page = await this.store.scroll(this.collection, {
        filter,
        offset,
        limit: Math.min(this.store.limits.maxScrollLimit, this.scanLimit - points.length),
        withPayload: true,
      });
      points.push(...page.points);
      if (page.nextOffset === undefined) return { points, truncated: false };
      if (points.length >= this.scanLimit) return { points, truncated: true };
      offset = page.nextOffset;
    }
  }
}

/** type and tags as a store filter: the type must match, and every tag must be present. */
export function memoryFilter(type?: string, tags?: string[]): Filter | undefined {
  const must = [
    ...(type ? [{ key: 'type', match: { value: type } }] : []),
    ...(tags ?? []).map((t) => ({ key: 'tags', match: { value: t } })),
  ];
  return must.length > 0 ? { must } : undefined;
}
