import { randomUUID } from 'node:crypto';
import { AppError, type Logger } from '@mcp-fleet/kit';
import type pg from 'pg';
import type { ParsedQuery, Term } from '../query';
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

export interface PostgresMemoryOptions {
  url: string;
  /** Validated identifier (config), quoted anyway. */
  schema: string;
  /** Validated text search configuration name (config). */
  tsConfig: string;
  poolMax: number;
  logger: Logger;
}

const COLUMNS = 'id, key, content, type, tags, importance, metadata, created_at, updated_at';
/** Rows per INSERT ... SELECT FROM unnest(...) in bulk loads. */
const BULK_ROWS = 1000;

interface Row {
  id: string;
  key: string | null;
  content: string;
  type: string;
  tags: string[];
  importance: number;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toMemory(r: Row): Memory {
  return {
    id: r.id,
    ...(r.key === null ? {} : { key: r.key }),
    content: r.content,
    type: r.type,
    tags: r.tags,
    importance: Number(r.importance),
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', '57P01', '57P03']);

/** PostgreSQL failures as the fleet's codes; the URL and server text stay in the log. */
export function mapPgError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; message?: string };
  if (e.code === '57014')
    return new AppError('TIMEOUT', 'PostgreSQL cancelled the statement (time limit); narrow the request.', { cause: err });
  if (
    (e.code && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(e.message ?? '')
  ) {
    return new AppError('UPSTREAM_UNAVAILABLE', 'PostgreSQL is not reachable right now; retry shortly or check MEMORY_DATABASE_URL.', {
      cause: err,
      retryAfter: 2,
    });
  }
  return new AppError('INTERNAL', 'The memory database failed; the cause is in the service log.', { cause: err });
}

/** PostgreSQL store: a tsvector generated column with a GIN index, ts_rank ordering. */
export class PostgresMemoryStore implements MemoryStore {
  readonly backend = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly table: string;
  private ready?: Promise<void>;

  constructor(private readonly options: PostgresMemoryOptions) {
    // pg (2.8 MiB of heap) is loaded by the first PostgresMemoryStore: a memory on SQLite never holds it
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.pool = new (require('pg') as typeof pg).Pool({
      connectionString: options.url,
      max: options.poolMax,
      connectionTimeoutMillis: 3000,
      statement_timeout: 20_000,
    });
    this.pool.on('error', (err) => options.logger.warn('idle PostgreSQL connection failed', { error: err.message }));
    this.table = `"${options.schema}".memories`;
  }

  /** Tables are created on first use (and retried after a failure), so a late database is not fatal. */
  private ensure(): Promise<void> {
    this.ready ??= this.migrate().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    const s = `"${this.options.schema}"`;
    const cfg = `'${this.options.tsConfig}'::regconfig`;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Several processes may start at once; one creates, the others wait and find it done.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`memory-mcp:${this.options.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${this.table} (
          id uuid PRIMARY KEY,
          key text UNIQUE,
          content text NOT NULL,
          type text NOT NULL,
          tags text[] NOT NULL DEFAULT '{}',
          importance double precision NOT NULL,
          metadata jsonb NOT NULL DEFAULT '{}',
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          tsv tsvector GENERATED ALWAYS AS (to_tsvector(${cfg}, content)) STORED
        )`);
      await client.query(`CREATE INDEX IF NOT EXISTS memories_tsv_idx ON ${this.table} USING gin (tsv)`);
      await client.query(`CREATE INDEX IF NOT EXISTS memories_tags_idx ON ${this.table} USING gin (tags)`);
      await client.query(`CREATE INDEX IF NOT EXISTS memories_created_idx ON ${this.table} (created_at, id)`);
      await client.query(`CREATE INDEX IF NOT EXISTS memories_type_created_idx ON ${this.table} (type, created_at, id)`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      await this.ensure();
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw mapPgError(err);
    }
  }

  async store(input: MemoryInput): Promise<StoreResult> {
    const id = randomUUID();
    const now = new Date();
    const [row] = await this.query<Row>(
      `INSERT INTO ${this.table} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       ON CONFLICT (key) DO UPDATE SET content = excluded.content, type = excluded.type, tags = excluded.tags,
         importance = excluded.importance, metadata = excluded.metadata, updated_at = excluded.updated_at
       RETURNING ${COLUMNS}`,
      [id, input.key ?? null, input.content, input.type, input.tags, input.importance, JSON.stringify(input.metadata), now],
    );
    return { memory: toMemory(row), created: row.id === id };
  }

  async storeMany(inputs: MemoryInput[]): Promise<{ created: number; updated: number }> {
    const rows = lastPerKey(inputs);
    try {
      await this.ensure();
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        let created = 0;
        const now = new Date();
        for (let i = 0; i < rows.length; i += BULK_ROWS) {
          const chunk = rows.slice(i, i + BULK_ROWS);
          const ids = chunk.map(() => randomUUID());
          const res = await client.query<{ id: string }>(
            `INSERT INTO ${this.table} (${COLUMNS})
             SELECT u.id, u.key, u.content, u.type, ARRAY(SELECT jsonb_array_elements_text(u.tags)), u.importance, u.metadata, $8, $8
             FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::float8[], $7::jsonb[])
               AS u(id, key, content, type, tags, importance, metadata)
             ON CONFLICT (key) DO UPDATE SET content = excluded.content, type = excluded.type, tags = excluded.tags,
               importance = excluded.importance, metadata = excluded.metadata, updated_at = excluded.updated_at
             RETURNING id`,
            [
              ids,
              chunk.map((m) => m.key ?? null),
              chunk.map((m) => m.content),
              chunk.map((m) => m.type),
              chunk.map((m) => JSON.stringify(m.tags)),
              chunk.map((m) => m.importance),
              chunk.map((m) => JSON.stringify(m.metadata)),
              now,
            ],
          );
          const fresh = new Set<string>(ids);
          created += res.rows.filter((r) => fresh.has(r.id)).length;
        }
        await client.query('COMMIT');
        return { created, updated: rows.length - created };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    } catch (err) {
      throw mapPgError(err);
    }
  }

  async list(q: ListQuery): Promise<Memory[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (q.type !== undefined) where.push(`type = ${p(q.type)}`);
    if (q.tag !== undefined) where.push(`tags @> ARRAY[${p(q.tag)}::text]`);
    const dir = q.order === 'newest' ? 'DESC' : 'ASC';
    if (q.after) {
      where.push(
        `(created_at, id) ${q.order === 'newest' ? '<' : '>'} (${p(new Date(q.after.createdAt).toISOString())}::timestamptz, ${p(q.after.id)}::uuid)`,
      );
    }
    const rows = await this.query<Row>(
      `SELECT ${COLUMNS} FROM ${this.table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at ${dir}, id ${dir} LIMIT ${p(q.limit)}`,
      params,
    );
    return rows.map(toMemory);
  }

  /** The parsed query as a tsquery built from parameters: words are values, never syntax. */
  private tsquery(q: ParsedQuery, p: (v: unknown) => string): string {
    const cfg = `'${this.options.tsConfig}'::regconfig`;
    const term = (t: Term) =>
      t.words.length === 1 ? `plainto_tsquery(${cfg}, ${p(t.words[0])})` : `phraseto_tsquery(${cfg}, ${p(t.words.join(' '))})`;
    const any = (terms: Term[]) => `(${terms.map(term).join(' || ')})`;
    const positive = q.clauses.map(any).join(' && ');
    return q.excluded.length ? `(${positive}) && !!${any(q.excluded)}` : positive;
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const tsq = this.tsquery(q.query, p);
    const where = ['m.tsv @@ q.query'];
    if (q.type !== undefined) where.push(`m.type = ${p(q.type)}`);
    if (q.tags.length) where.push(`m.tags @> ${p(q.tags)}::text[]`);
    const cfg = `'${this.options.tsConfig}'::regconfig`;
    const rows = await this.query<Row & { score: number; snippet: string }>(
      `WITH q AS (SELECT ${tsq} AS query),
       hits AS (
         SELECT ${COLUMNS.split(', ')
           .map((c) => `m.${c}`)
           .join(', ')}, ts_rank(m.tsv, q.query, 1) AS score
         FROM ${this.table} m, q
         WHERE ${where.join(' AND ')}
         ORDER BY score DESC, m.created_at DESC, m.id DESC
         LIMIT ${p(q.limit)} OFFSET ${p(q.offset)}
       )
       SELECT hits.*, ts_headline(${cfg}, hits.content, q.query,
         'StartSel=${SNIPPET_MARK}, StopSel=${SNIPPET_MARK}, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "') AS snippet
       FROM hits, q
       ORDER BY hits.score DESC, hits.created_at DESC, hits.id DESC`,
      params,
    );
    return rows.map((r) => ({ memory: toMemory(r), score: Number(r.score), snippet: r.snippet }));
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.query(`DELETE FROM ${this.table} WHERE id = $1 RETURNING id`, [id]);
    return rows.length > 0;
  }

  async stats(): Promise<MemoryStats> {
    const byTypeRows = await this.query<{ type: string; n: string }>(
      `SELECT type, count(*) AS n FROM ${this.table} GROUP BY type ORDER BY type`,
    );
    const [span] = await this.query<{ oldest: Date | null; newest: Date | null; bytes: string }>(
      `SELECT min(created_at) AS oldest, max(created_at) AS newest, pg_total_relation_size($1::regclass) AS bytes FROM ${this.table}`,
      [this.table],
    );
    const byType = Object.fromEntries(byTypeRows.map((r) => [r.type, Number(r.n)]));
    return {
      backend: this.backend,
      total: byTypeRows.reduce((n, r) => n + Number(r.n), 0),
      byType,
      ...(span.oldest ? { oldest: span.oldest.toISOString(), newest: span.newest!.toISOString() } : {}),
      storageBytes: Number(span.bytes),
    };
  }

  async ping(): Promise<Record<string, unknown>> {
    await this.query('SELECT 1');
    return { backend: this.backend, schema: this.options.schema };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
