import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { matchesFilter } from './filter';
import { compareIds, idToKey, keyToId, parsePointId, type PointId } from './ids';
import { VectorMatrix } from './kernel';
import { TopK } from './top-k';
import {
  DEFAULT_LIMITS,
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
  float32ToNumber,
  normalise,
  notFound,
} from './validate';

export interface EmbeddedVectorStoreOptions {
  /** Directory holding `vectors.sqlite` (created if missing). */
  dir: string;
  limits?: Partial<VectorStoreLimits>;
  /** Points one collection may hold (memory bound); default 1,000,000. */
  maxPointsPerCollection?: number;
}

/** In memory: one contiguous float32 matrix per collection (row-major), ids and payloads by row. */
interface Collection {
  name: string;
  size: number;
  distance: Distance;
  matrix: VectorMatrix;
  count: number;
  ids: PointId[];
  payloads: Payload[];
  rowOf: Map<PointId, number>;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS collections (
  name TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  distance TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
  collection TEXT NOT NULL,
  id TEXT NOT NULL,
  vector BLOB NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (collection, id)
);
`;

const SQL_CHUNK = 200;

function chunks<T>(items: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}

const toBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/**
 * The embedded store: SQLite (WAL, one transaction per call) is the durable copy, and each
 * collection is mirrored in memory for brute-force search. A write is committed to SQLite first
 * and applied to memory only after the commit, so a failed write changes nothing. Writes are
 * serialised; searches run on the in-memory mirror. One process per directory.
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly kind = 'embedded' as const;
  readonly limits: VectorStoreLimits;
  private readonly collections = new Map<string, Collection>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly db: SqliteDb,
    limits: VectorStoreLimits,
    private readonly maxPointsPerCollection: number,
  ) {
    this.limits = limits;
  }

  static async open(options: EmbeddedVectorStoreOptions): Promise<EmbeddedVectorStore> {
    fs.mkdirSync(options.dir, { recursive: true });
    const db = await SqliteDb.open(path.join(options.dir, 'vectors.sqlite'));
    try {
      await db.exec(SCHEMA);
      const store = new EmbeddedVectorStore(db, { ...DEFAULT_LIMITS, ...options.limits }, options.maxPointsPerCollection ?? 1_000_000);
      await store.load();
      return store;
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
  }

  private async load(): Promise<void> {
    const specs = await this.db.all<{ name: string; size: number; distance: Distance }>('SELECT name, size, distance FROM collections');
    for (const spec of specs) {
      const rows = await this.db.all<{ id: string; vector: Buffer; payload: string }>(
        'SELECT id, vector, payload FROM points WHERE collection = ?',
        [spec.name],
      );
      const col = this.emptyCollection(spec, rows.length);
      for (const row of rows) {
        if (row.vector.byteLength !== spec.size * 4) {
          throw new Error(
            `vectors.sqlite: point ${row.id} of "${spec.name}" has ${row.vector.byteLength} bytes, expected ${spec.size * 4}`,
          );
        }
        const r = col.count++;
        col.matrix.setRowBytes(r, row.vector);
        const id = keyToId(row.id);
        col.ids.push(id);
        col.payloads.push(JSON.parse(row.payload) as Payload);
        col.rowOf.set(id, r);
      }
      this.collections.set(spec.name, col);
    }
  }

  private emptyCollection(spec: CollectionSpec, capacity: number): Collection {
    return {
      name: spec.name,
      size: spec.size,
      distance: spec.distance,
      matrix: new VectorMatrix(spec.size, capacity),
      count: 0,
      ids: [],
      payloads: [],
      rowOf: new Map(),
    };
  }

  /** Writes run one at a time, in arrival order. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private get(name: unknown): Collection {
    if (this.closed) throw new AppError('UPSTREAM_UNAVAILABLE', 'The vector store is closed.');
    const checked = checkCollectionName(name);
    const col = this.collections.get(checked);
    if (!col) throw notFound(checked);
    return col;
  }

  private info(col: Collection): CollectionInfo {
    return { name: col.name, size: col.size, distance: col.distance, pointsCount: col.count };
  }

  private put(col: Collection, id: PointId, vector: Float32Array, payload: Payload): void {
    let row = col.rowOf.get(id);
    if (row === undefined) {
      col.matrix.reserve(col.count + 1);
      row = col.count++;
      col.ids[row] = id;
      col.rowOf.set(id, row);
    }
    col.matrix.setRow(row, vector);
    col.payloads[row] = payload;
  }

  /** Swap-remove: the last row moves into the hole, keeping the matrix contiguous. */
  private remove(col: Collection, id: PointId): void {
    const row = col.rowOf.get(id);
    if (row === undefined) return;
    const last = col.count - 1;
    if (row !== last) {
      col.matrix.copyRow(last, row);
      col.ids[row] = col.ids[last];
      col.payloads[row] = col.payloads[last];
      col.rowOf.set(col.ids[row], row);
    }
    col.ids.pop();
    col.payloads.pop();
    col.rowOf.delete(id);
    col.count = last;
  }

  private vectorOf(col: Collection, row: number): number[] {
    return Array.from(col.matrix.getRow(row), float32ToNumber);
  }

  private point(col: Collection, row: number, options: FetchOptions): StoredPoint {
    const p: StoredPoint = { id: col.ids[row] };
    if (options.withPayload ?? true) p.payload = structuredClone(col.payloads[row]);
    if (options.withVectors) p.vector = this.vectorOf(col, row);
    return p;
  }

  async createCollection(spec: CollectionSpec): Promise<CollectionInfo> {
    const checked = checkSpec(spec);
    return this.exclusive(async () => {
      if (this.closed) throw new AppError('UPSTREAM_UNAVAILABLE', 'The vector store is closed.');
      if (this.collections.has(checked.name)) throw conflict(checked.name);
      await this.db.run('INSERT INTO collections (name, size, distance, created_at) VALUES (?, ?, ?, ?)', [
        checked.name,
        checked.size,
        checked.distance,
        new Date().toISOString(),
      ]);
      const col = this.emptyCollection(checked, 16);
      this.collections.set(checked.name, col);
      return this.info(col);
    });
  }

  async deleteCollection(name: string): Promise<boolean> {
    const checked = checkCollectionName(name);
    return this.exclusive(async () => {
      if (!this.collections.has(checked)) return false;
      await this.db.transaction(async (tx) => {
        await tx.run('DELETE FROM points WHERE collection = ?', [checked]);
        await tx.run('DELETE FROM collections WHERE name = ?', [checked]);
      });
      this.collections.delete(checked);
      return true;
    });
  }

  async listCollections(): Promise<string[]> {
    return [...this.collections.keys()].sort();
  }

  async collectionInfo(name: string): Promise<CollectionInfo> {
    return this.info(this.get(name));
  }

  async hasCollection(name: string): Promise<boolean> {
    return this.collections.has(checkCollectionName(name));
  }

  async upsert(collection: string, points: PointInput[]): Promise<{ upserted: number }> {
    if (!Array.isArray(points) || points.length === 0) {
      throw new AppError('VALIDATION_ERROR', 'points must be a non-empty array.', {
        details: [{ path: 'points', message: 'non-empty array' }],
      });
    }
    checkCount(points.length, this.limits, 'points');
    return this.exclusive(async () => {
      const col = this.get(collection);
      const rows = points.map((p, i) => {
        const id = parsePointId(p?.id, `points.${i}.id`);
        const vector = checkVector(p.vector, col.size, col.name, `points.${i}.vector`);
        if (col.distance === 'Cosine') normalise(vector);
        const payload = checkPayload(p.payload, this.limits, `points.${i}.payload`);
        return { id, vector, payload };
      });
      const fresh = new Set(rows.filter((r) => !col.rowOf.has(r.id)).map((r) => r.id)).size;
      if (col.count + fresh > this.maxPointsPerCollection) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `Collection "${col.name}" would exceed ${this.maxPointsPerCollection} points in the embedded store; delete points or configure Qdrant (QDRANT_URL).`,
        );
      }
      await this.db.transaction(async (tx) => {
        for (const chunk of chunks(rows, SQL_CHUNK)) {
          await tx.run(
            `INSERT INTO points (collection, id, vector, payload) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}
             ON CONFLICT (collection, id) DO UPDATE SET vector = excluded.vector, payload = excluded.payload`,
            chunk.flatMap((r) => [col.name, idToKey(r.id), toBlob(r.vector), r.payload.json]),
          );
        }
      });
      for (const r of rows) this.put(col, r.id, r.vector, r.payload.value);
      return { upserted: rows.length };
    });
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
    return this.exclusive(async () => {
      const col = this.get(collection);
      const pending = new Map<PointId, { vector: Float32Array; payload: Payload; json: string }>();
      const missing: PointId[] = [];
      for (const [i, p] of points.entries()) {
        const id = parsePointId(p?.id, `points.${i}.id`);
        if (p.vector === undefined && p.payload === undefined) {
          throw new AppError('VALIDATION_ERROR', `points.${i} changes nothing; give a vector, a payload or both.`, {
            details: [{ path: `points.${i}`, message: 'vector or payload required' }],
          });
        }
        const row = col.rowOf.get(id);
        if (row === undefined) {
          missing.push(id);
          continue;
        }
        const current = pending.get(id) ?? {
          vector: col.matrix.getRow(row),
          payload: col.payloads[row],
          json: '',
        };
        let vector = current.vector;
        if (p.vector !== undefined) {
          vector = checkVector(p.vector, col.size, col.name, `points.${i}.vector`);
          if (col.distance === 'Cosine') normalise(vector);
        }
        let payload = current.payload;
        let json = current.json || JSON.stringify(payload);
        if (p.payload !== undefined) {
          const incoming = checkPayload(p.payload, this.limits, `points.${i}.payload`);
          const next = checkPayload(
            mode === 'merge' ? { ...current.payload, ...incoming.value } : incoming.value,
            this.limits,
            `points.${i}.payload`,
          );
          payload = next.value;
          json = next.json;
        }
        pending.set(id, { vector, payload, json });
      }
      if (missing.length > 0) {
        throw new AppError(
          'NOT_FOUND',
          `No point with id ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', ...' : ''} in "${col.name}"; nothing was updated. Upsert creates points.`,
          { details: missing.slice(0, 100).map((id) => ({ path: 'points', message: `unknown id ${id}` })) },
        );
      }
      await this.db.transaction(async (tx) => {
        for (const [id, u] of pending) {
          await tx.run('UPDATE points SET vector = ?, payload = ? WHERE collection = ? AND id = ?', [
            toBlob(u.vector),
            u.json,
            col.name,
            idToKey(id),
          ]);
        }
      });
      for (const [id, u] of pending) this.put(col, id, u.vector, u.payload);
      return { updated: pending.size };
    });
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
    return this.exclusive(async () => {
      const col = this.get(collection);
      const doomed = byIds
        ? [...new Set(byIds)].filter((id) => col.rowOf.has(id))
        : col.ids.slice(0, col.count).filter((id, row) => matchesFilter(filter!, id, col.payloads[row]));
      if (doomed.length === 0) return { deleted: 0 };
      await this.db.transaction(async (tx) => {
        for (const chunk of chunks(doomed, SQL_CHUNK)) {
          await tx.run(`DELETE FROM points WHERE collection = ? AND id IN (${chunk.map(() => '?').join(', ')})`, [
            col.name,
            ...chunk.map(idToKey),
          ]);
        }
      });
      for (const id of doomed) this.remove(col, id);
      return { deleted: doomed.length };
    });
  }

  async fetch(collection: string, ids: PointId[], options: FetchOptions = {}): Promise<StoredPoint[]> {
    const checked = checkIds(ids, this.limits);
    const col = this.get(collection);
    const out: StoredPoint[] = [];
    for (const id of new Set(checked)) {
      const row = col.rowOf.get(id);
      if (row !== undefined) out.push(this.point(col, row, options));
    }
    return out;
  }

  async search(collection: string, request: SearchRequest): Promise<ScoredPoint[]> {
    const col = this.get(collection);
    const query = checkVector(request?.vector, col.size, col.name, 'vector');
    const limit = checkLimit(request.limit, this.limits.maxSearchLimit, 10);
    const filter = checkFilter(request.filter);
    const threshold = checkThreshold(request.scoreThreshold);
    const euclid = col.distance === 'Euclid';
    if (col.distance === 'Cosine') normalise(query);
    // Keys: higher is better; Euclid uses minus the squared distance.
    let minKey = -Infinity;
    if (threshold !== undefined) minKey = euclid ? (threshold < 0 ? Infinity : -(threshold * threshold)) : threshold;
    const top = new TopK(limit);
    const { count, ids, payloads } = col;
    const scores = col.matrix.score(query, count, euclid ? 'l2' : 'dot');
    for (let row = 0; row < count; row++) {
      const key = euclid ? -scores[row] : scores[row];
      if (key < minKey || key < top.floor()) continue;
      if (filter && !matchesFilter(filter, ids[row], payloads[row])) continue;
      top.offer(key, row);
    }
    return top.sorted().map(({ key, row }) => {
      const p = this.point(col, row, { withPayload: request.withPayload ?? true, withVectors: request.withVectors });
      return { ...p, score: euclid ? Math.sqrt(-key) : key };
    });
  }

  async scroll(collection: string, request: ScrollRequest = {}): Promise<ScrollPage> {
    const col = this.get(collection);
    const limit = checkLimit(request.limit, this.limits.maxScrollLimit, 10);
    const filter = checkFilter(request.filter);
    const offset = request.offset === undefined ? undefined : parsePointId(request.offset, 'offset');
    const rows: number[] = [];
    for (let row = 0; row < col.count; row++) {
      const id = col.ids[row];
      if (offset !== undefined && compareIds(id, offset) < 0) continue;
      if (filter && !matchesFilter(filter, id, col.payloads[row])) continue;
      rows.push(row);
    }
    rows.sort((a, b) => compareIds(col.ids[a], col.ids[b]));
    const page = rows
      .slice(0, limit)
      .map((row) => this.point(col, row, { withPayload: request.withPayload ?? true, withVectors: request.withVectors }));
    return rows.length > limit ? { points: page, nextOffset: col.ids[rows[limit]] } : { points: page };
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    const col = this.get(collection);
    const checked = checkFilter(filter);
    if (!checked) return col.count;
    let n = 0;
    for (let row = 0; row < col.count; row++) if (matchesFilter(checked, col.ids[row], col.payloads[row])) n++;
    return n;
  }

  async health(): Promise<Record<string, unknown>> {
    if (this.closed) throw new Error('vector store closed');
    await this.db.get('SELECT 1');
    let points = 0;
    for (const c of this.collections.values()) points += c.count;
    return { backend: 'embedded', collections: this.collections.size, points };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.exclusive(async () => {
      this.closed = true;
      await this.db.close();
    });
  }
}
