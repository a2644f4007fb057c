import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { AppError } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { toFts5Match } from '../query';
import {
  lastPerKey,
  SNIPPET_MARK,
  type ListQuery,
  type Memory,
  type MemoryInput,
  type MemoryStats,
  type MemoryStore,
  type SearchHit,
  type SearchQuery,
  type StoreResult,
} from './memory-store';

/**
 * 2: the FTS5 index is kept merged into one segment (see compactIfDue); a database at 1 has it
 * merged once on open. The tables are unchanged.
 */
const SCHEMA_VERSION = 2;

// External-content FTS5 index kept in sync by triggers; porter stemming so that "running"
// finds "run", as PostgreSQL's english configuration does.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS memories (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT UNIQUE,
  content TEXT NOT NULL,
  type TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  importance REAL NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at, id);
CREATE INDEX IF NOT EXISTS memories_type_created ON memories (type, created_at, id);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  content, content='memories', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
PRAGMA user_version = ${SCHEMA_VERSION};
`;

const COLUMNS = 'id, key, content, type, tags, importance, metadata, created_at, updated_at';
const UPSERT_TAIL = `ON CONFLICT (key) DO UPDATE SET content = excluded.content, type = excluded.type, tags = excluded.tags,
  importance = excluded.importance, metadata = excluded.metadata, updated_at = excluded.updated_at`;
/** Rows per multi-row INSERT in bulk loads (9 parameters each, well under SQLite's limit). */
const BULK_ROWS = 500;
/**
 * The FTS5 index is merged into one segment ('optimize') once the rows written since the last merge
 * reach this share of the table (and at least COMPACT_MIN_ROWS): amortised, a write pays for about
 * ten rows' worth of merging. Each segment left costs every search's second stage (MATCH with a
 * rowid list, for snippet()) a seek: at 100k memories, 10 segments after a bulk load made that stage
 * 1.3-5 ms, one segment 0.4-0.6 ms. bm25() results do not depend on the segments.
 */
const COMPACT_SHARE = 0.1;
const COMPACT_MIN_ROWS = 1000;
const OPTIMIZE = "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')";

interface Row {
  id: string;
  key: string | null;
  content: string;
  type: string;
  tags: string;
  importance: number;
  metadata: string;
  created_at: number;
  updated_at: number;
}

function toMemory(r: Row): Memory {
  return {
    id: r.id,
    ...(r.key === null ? {} : { key: r.key }),
    content: r.content,
    type: r.type,
    tags: JSON.parse(r.tags) as string[],
    importance: r.importance,
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

const rowParams = (id: string, m: MemoryInput, now: number) => [
  id,
  m.key ?? null,
  m.content,
  m.type,
  JSON.stringify(m.tags),
  m.importance,
  JSON.stringify(m.metadata),
  now,
  now,
];

const tagFilter = 'EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)';

/** The embedded store: one SQLite file under DATA_DIR; writes go through one queue. */
export class SqliteMemoryStore implements MemoryStore {
  readonly backend = 'sqlite' as const;
  private writes: Promise<unknown> = Promise.resolve();
  /** FTS rows written (inserted, rewritten, deleted) since the index was last merged into one segment. */
  private written = 0;

  private constructor(
    private readonly db: SqliteDb,
    /** Read-only connections that rank a search in parallel (none: the main connection ranks it). */
    private readonly rankers: SqliteDb[],
    /** Memories in the table (kept up to date by the writes, which all go through this store). */
    private total: number,
    private readonly compact: boolean,
  ) {}

  /**
   * `searchShards` read connections (WAL lets them read beside the writer) rank each search in
   * parallel, one range of rowids each: bm25() takes its statistics from the whole index whatever
   * the range, so merging the ranges' top rows gives exactly the top rows of one connection.
   * `compact: false` leaves the FTS5 index to its own automerge (many segments; the bench's "before").
   */
  static async open(file: string, options: { searchShards?: number; compact?: boolean } = {}): Promise<SqliteMemoryStore> {
    const db = await SqliteDb.open(file);
    const version = (await db.get<{ user_version: number }>('PRAGMA user_version'))?.user_version ?? 0;
    if (version > SCHEMA_VERSION) {
      await db.close();
      throw new Error(`${file} is at schema version ${version}; this memory-mcp knows up to ${SCHEMA_VERSION}.`);
    }
    await db.exec(SCHEMA);
    if (version > 0 && version < 2) await db.run(OPTIMIZE); // migrate 1 -> 2: one merged FTS segment
    const total = (await db.get<{ n: number }>('SELECT count(*) AS n FROM memories'))?.n ?? 0;
    const shards = file === ':memory:' ? 1 : (options.searchShards ?? 1);
    const rankers = shards > 1 ? await Promise.all(Array.from({ length: shards }, () => SqliteDb.open(file, { readonly: true }))) : [];
    return new SqliteMemoryStore(db, rankers, total, options.compact ?? true);
  }

  /** Counts a write's FTS rows and, once they reach COMPACT_SHARE of the table, merges the index into one segment. */
  private async compactIfDue(rows: number): Promise<void> {
    this.written += rows;
    if (!this.compact || this.written < Math.max(COMPACT_MIN_ROWS, this.total * COMPACT_SHARE)) return;
    await this.db.run(OPTIMIZE);
    this.written = 0;
  }

  /** The page's rowids by bm25 (ties newest first): ranked on one connection, or by range on the rankers and merged. */
  private async rank(sql: string, params: unknown[], limit: number, offset: number): Promise<{ seq: number; bm25_rank: number }[]> {
    if (this.rankers.length === 0) return this.db.all(`${sql} LIMIT ? OFFSET ?`, [...params, limit, offset]);
    const span = await this.db.get<{ lo: number | null; hi: number | null }>(
      'SELECT (SELECT min(seq) FROM memories) AS lo, (SELECT max(seq) FROM memories) AS hi',
    );
    if (span?.lo == null || span.hi == null) return [];
    const lo = span.lo;
    const step = Math.ceil((span.hi - lo + 1) / this.rankers.length);
    const parts = await Promise.all(
      this.rankers.map((r, k) =>
        r.all<{ seq: number; bm25_rank: number }>(`${sql} LIMIT ?`, [...params, lo + k * step, lo + (k + 1) * step - 1, offset + limit]),
      ),
    );
    return parts
      .flat()
      .sort((a, b) => a.bm25_rank - b.bm25_rank || b.seq - a.seq)
      .slice(offset, offset + limit);
  }

  /**
   * Every write waits its turn: each keeps `total` from what its statement returned and then decides
   * on compaction (compactIfDue), which another write run between those steps would make wrong.
   * (Other callers' statements wait for an open transaction on the one connection: SqliteDb.)
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.writes.then(fn, fn);
    this.writes = next.catch(() => undefined);
    return next;
  }

  store(input: MemoryInput): Promise<StoreResult> {
    return this.serial(async () => {
      const id = randomUUID();
      const row = await this.db.get<Row>(
        `INSERT INTO memories (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${UPSERT_TAIL} RETURNING ${COLUMNS}`,
        rowParams(id, input, Date.now()),
      );
      const created = row!.id === id;
      if (created) this.total++;
      await this.compactIfDue(1);
      return { memory: toMemory(row!), created };
    });
  }

  storeMany(inputs: MemoryInput[]): Promise<{ created: number; updated: number }> {
    return this.serial(async () => {
      const counts = await this.db.transaction(async (tx) => {
        const rows = lastPerKey(inputs);
        let created = 0;
        const now = Date.now();
        for (let i = 0; i < rows.length; i += BULK_ROWS) {
          const chunk = rows.slice(i, i + BULK_ROWS);
          const ids = chunk.map(() => randomUUID());
          const placeholders = chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
          const params = chunk.flatMap((m, n) => rowParams(ids[n], m, now));
          const returned = await tx.all<{ id: string }>(
            `INSERT INTO memories (${COLUMNS}) VALUES ${placeholders} ${UPSERT_TAIL} RETURNING id`,
            params,
          );
          const fresh = new Set<string>(ids);
          created += returned.filter((r) => fresh.has(r.id)).length;
        }
        return { created, updated: rows.length - created };
      });
      this.total += counts.created;
      await this.compactIfDue(counts.created + counts.updated);
      return counts;
    });
  }

  async list(q: ListQuery): Promise<Memory[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.type !== undefined) {
      where.push('m.type = ?');
      params.push(q.type);
    }
    if (q.tag !== undefined) {
      where.push(tagFilter);
      params.push(q.tag);
    }
    const dir = q.order === 'newest' ? 'DESC' : 'ASC';
    if (q.after) {
      where.push(`(m.created_at, m.id) ${q.order === 'newest' ? '<' : '>'} (?, ?)`);
      params.push(q.after.createdAt, q.after.id);
    }
    const rows = await this.db.all<Row>(
      `SELECT ${COLUMNS} FROM memories m ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY m.created_at ${dir}, m.id ${dir} LIMIT ?`,
      [...params, q.limit],
    );
    return rows.map(toMemory);
  }

  /**
   * Two stages, so the expensive parts run on one page of rows rather than on every match: first
   * bm25() ranks the matches inside FTS5 and keeps only the page's rowids (ties newest first, by
   * insertion order), then the page's rows and snippets are read by rowid. A word found in a third
   * of 100k memories costs bm25 over ~30k rows either way; the join, the snippet() and the wide
   * sort no longer do (issue 14: p50 about halved on the 100k bench).
   */
  async search(q: SearchQuery): Promise<SearchHit[]> {
    const match = toFts5Match(q.query);
    const filters: string[] = [];
    const filterParams: unknown[] = [];
    if (q.type !== undefined) {
      filters.push('m.type = ?');
      filterParams.push(q.type);
    }
    for (const tag of q.tags) {
      filters.push(tagFilter);
      filterParams.push(tag);
    }
    try {
      const range = this.rankers.length ? ' AND memories_fts.rowid BETWEEN ? AND ?' : '';
      const ranked = await this.rank(
        filters.length
          ? `SELECT memories_fts.rowid AS seq, bm25(memories_fts) AS bm25_rank
             FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
             WHERE memories_fts MATCH ? AND ${filters.join(' AND ')}${range}
             ORDER BY bm25_rank, memories_fts.rowid DESC`
          : `SELECT rowid AS seq, bm25(memories_fts) AS bm25_rank FROM memories_fts
             WHERE memories_fts MATCH ?${range} ORDER BY bm25_rank, rowid DESC`,
        [match, ...filterParams],
        q.limit,
        q.offset,
      );
      if (ranked.length === 0) return [];
      const rows = await this.db.all<Row & { seq: number; snippet: string }>(
        `SELECT m.seq, ${COLUMNS.split(', ')
          .map((c) => `m.${c}`)
          .join(', ')}, snippet(memories_fts, 0, '${SNIPPET_MARK}', '${SNIPPET_MARK}', '…', 24) AS snippet
         FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
         WHERE memories_fts MATCH ? AND memories_fts.rowid IN (${ranked.map(() => '?').join(', ')})`,
        [match, ...ranked.map((r) => r.seq)],
      );
      const bySeq = new Map(rows.map((r) => [r.seq, r]));
      // bm25() is lower-is-better; the API's score is higher-is-better. A row deleted between the
      // two statements is simply left out.
      return ranked.flatMap((r) => {
        const row = bySeq.get(r.seq);
        return row ? [{ memory: toMemory(row), score: -r.bm25_rank, snippet: row.snippet }] : [];
      });
    } catch (err) {
      // Cannot happen with parsed queries; if it does, it is the caller's text, not a server fault.
      if (/fts5|syntax error/i.test((err as Error).message)) {
        throw new AppError('VALIDATION_ERROR', 'The search query could not be used; search for plain words.', { cause: err });
      }
      throw err;
    }
  }

  delete(id: string): Promise<boolean> {
    return this.serial(async () => {
      const deleted = (await this.db.run('DELETE FROM memories WHERE id = ?', [id])).changes > 0;
      if (deleted) {
        this.total--;
        await this.compactIfDue(1);
      }
      return deleted;
    });
  }

  async stats(): Promise<MemoryStats> {
    const byTypeRows = await this.db.all<{ type: string; n: number }>(
      'SELECT type, count(*) AS n FROM memories GROUP BY type ORDER BY type',
    );
    const span = await this.db.get<{ oldest: number | null; newest: number | null }>(
      'SELECT min(created_at) AS oldest, max(created_at) AS newest FROM memories',
    );
    const size = await this.db.get<{ bytes: number }>(
      'SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()',
    );
    let wal = 0;
    try {
      wal = fs.statSync(`${this.db.file}-wal`).size;
    } catch {
      // no WAL file right now
    }
    const byType = Object.fromEntries(byTypeRows.map((r) => [r.type, r.n]));
    return {
      backend: this.backend,
      total: byTypeRows.reduce((n, r) => n + r.n, 0),
      byType,
      ...(span?.oldest != null ? { oldest: new Date(span.oldest).toISOString(), newest: new Date(span.newest!).toISOString() } : {}),
      storageBytes: (size?.bytes ?? 0) + wal,
    };
  }

  async ping(): Promise<Record<string, unknown>> {
    await this.db.get('SELECT 1');
    return { backend: this.backend };
  }

  async close(): Promise<void> {
    await this.writes;
    await Promise.all(this.rankers.map((r) => r.close()));
    await this.db.close();
  }
}
