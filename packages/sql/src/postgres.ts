import { AppError, lazy, type Logger } from '@mcp-fleet/kit';
import type pg from 'pg';
import { mapPgError } from './errors';
import { inspectPgRole, privilegedRoleError, type PgRoleReport } from './pg-role';
import { redactUrl, scrub, urlPassword } from './redact';
import { PG_TYPE_NAMES } from './pg-types';
import { DEFAULT_LIMITS, pickLimits, type ConnectionLimits } from './limits';
import type {
  ColumnInfo,
  ConnectionInfo,
  ConnectionStats,
  PingResult,
  QueryOptions,
  QueryResult,
  SqlConnection,
  SqlParam,
  TableDescription,
  TableRef,
} from './types';
import { shapeRows } from './values';

/* eslint-disable @typescript-eslint/no-require-imports */
/** pg (2.8 MiB of heap), loaded by the first PostgreSQL pool: a service whose connections are all SQLite never holds it. */
const pgLib = lazy(() => require('pg') as typeof pg);
/* eslint-enable @typescript-eslint/no-require-imports */

export interface PgPoolOptions {
  max?: number;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** Close a connection this long after it opened (0: never), so a role check made on it is never older. */
  maxLifetimeSeconds?: number;
  applicationName?: string;
  logger?: Logger;
}

/** A pg.Pool whose idle-client errors are logged (never thrown) and never carry the password. */
export function createPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const pool = new (pgLib().Pool)({
    connectionString: url,
    max: options.max ?? 5,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    maxLifetimeSeconds: options.maxLifetimeSeconds ?? 0,
    application_name: options.applicationName ?? 'mcp-fleet',
  });
  const secret = urlPassword(url);
  pool.on('error', (err) => {
    options.logger?.warn('an idle PostgreSQL connection failed', { target: redactUrl(url), error: scrub(err.message, [secret]) });
  });
  return pool;
}

export interface PgConnectionOptions extends Partial<ConnectionLimits>, PgPoolOptions {
  name: string;
  url: string;
  writable: boolean;
  /**
   * Serve a read-only connection even when its role is privileged (superuser, server-file roles,
   * CREATEROLE...). Unsafe: such a role runs programs and reads files from inside a READ ONLY transaction.
   */
  allowPrivilegedRole?: boolean;
}

/** Read-only connections are reopened this often, so the role check on each is at most this old. */
export const READ_ONLY_CONNECTION_LIFETIME_S = 60;

interface PgWire {
  close(msg: { type: string; name: string }): void;
  sync(): void;
}

/**
 * A query that stops at `rows` rows: when the portal is suspended (more rows exist) it closes the
 * portal instead of fetching the rest, so a huge result never travels or sits in memory.
 * It relies on pg's Submittable hooks, the same ones pg-cursor uses. Made from pg's Query when
 * first used (pg is loaded by then: a query runs on a pool's client).
 */
const cappedQuery = lazy(
  () =>
    class extends pgLib().Query {
      suspended = false;
      /** A Sync was sent: the backend answers it with one ReadyForQuery, which ends this query. */
      synced = false;

      handlePortalSuspended(connection: PgWire): void {
        this.suspended = true;
        connection.close({ type: 'P', name: (this as unknown as { portal: string }).portal ?? '' });
        connection.sync();
        this.synced = true;
      }

      /**
       * With a row limit pg sends no Sync up front; after a server error the backend waits for one (as
       * pg-cursor does), unless one was sent already: an error after the portal was suspended (the
       * statement timeout firing before the Close) would otherwise get a second Sync, whose
       * ReadyForQuery then reached the client's next query ("unexpected commandComplete message").
       */
      handleError(err: Error & { severity?: string }, connection: PgWire): void {
        if (err.severity && !this.synced) {
          connection.sync();
          this.synced = true;
        }
        (pgLib().Query.prototype as unknown as { handleError(e: Error, c: PgWire): void }).handleError.call(this, err, connection);
      }
    },
);

interface ArrayResult {
  command: string | null;
  rowCount: number | null;
  fields: { name: string; dataTypeID: number }[];
  rows: unknown[][];
}

function runCapped(client: pg.PoolClient, text: string, values: unknown[], rows: number): Promise<{ result: ArrayResult; more: boolean }> {
  return new Promise((resolve, reject) => {
    const q = new (cappedQuery())({ text, values, rows, rowMode: 'array' } as pg.QueryConfig);
    q.once('end', (result: ArrayResult) => resolve({ result, more: q.suspended }));
    q.once('error', reject);
    client.query(q);
  });
}

const WRITE_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

export class PgConnection implements SqlConnection {
  readonly info: ConnectionInfo;
  readonly pool: pg.Pool;
  private readonly limits: ConnectionLimits;
  private readonly secrets: (string | undefined)[];
  private readonly typeNames = new Map<number, string>(Object.entries(PG_TYPE_NAMES).map(([k, v]) => [Number(k), v]));
  private counters = { queries: 0, errors: 0 };
  /** Pooled clients whose role passed the read-only check. */
  private readonly vetted = new WeakSet<pg.PoolClient>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: PgConnectionOptions) {
    this.pool = createPgPool(options.url, {
      ...options,
      maxLifetimeSeconds: options.maxLifetimeSeconds ?? (options.writable ? 0 : READ_ONLY_CONNECTION_LIFETIME_S),
    });
    this.limits = { ...DEFAULT_LIMITS, ...pickLimits(options) };
    this.secrets = [urlPassword(options.url)];
    this.info = { name: options.name, engine: 'postgres', writable: options.writable, target: redactUrl(options.url) };
  }

  private fail(err: unknown, sql?: string): AppError {
    this.counters.errors++;
    return mapPgError(err, sql, this.secrets);
  }

  /** The login role and what it may do beyond reading (see pg-role.ts); close() waits for it. */
  inspectRole(): Promise<PgRoleReport> {
    const run = this.withTransaction(false, this.limits.statementTimeoutMs, inspectPgRole, undefined, false);
    const tracked = run.catch(() => undefined);
    this.pending.add(tracked);
    void tracked.then(() => this.pending.delete(tracked));
    return run;
  }

  /**
   * Read-only service holds only over a role that cannot act beyond reading, so every pooled
   * client of a read-only connection is checked once before its first use (and clients are
   * reopened every READ_ONLY_CONNECTION_LIFETIME_S, so a role made privileged later is caught).
   */
  private async vet(client: pg.PoolClient): Promise<void> {
    if (this.options.writable || this.options.allowPrivilegedRole || this.vetted.has(client)) return;
    const report = await inspectPgRole(client);
    if (report.problems.length > 0) throw privilegedRoleError(this.options.name, report);
    this.vetted.add(client);
  }

  /**
   * Run `fn` on one pooled client inside a transaction (read-only unless `write`) with a statement timeout.
   * A read-only transaction first takes its snapshot (`SELECT 1`): from then on the server refuses to make
   * it read-write, whatever the spelling (SET TRANSACTION, set_config, SET SESSION CHARACTERISTICS, a DO
   * block). Read-only work always rolls back, and every call ends with DISCARD ALL, so nothing a call
   * did to the session (settings, advisory locks, prepared statements, LISTEN) reaches the next caller.
   */
  private async withTransaction<T>(
    write: boolean,
    timeoutMs: number,
    fn: (client: pg.PoolClient) => Promise<T>,
    sql?: string,
    checkRole = true,
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.fail(err);
    }
    let broken: Error | undefined;
    try {
      if (checkRole) await this.vet(client);
      const timeout = `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`;
      await client.query(write ? `BEGIN READ WRITE; ${timeout}` : `BEGIN READ ONLY; ${timeout}; SELECT 1`);
      const out = await fn(client);
      await client.query(write ? 'COMMIT' : 'ROLLBACK');
      await client.query('DISCARD ALL');
      return out;
    } catch (err) {
      await client
        .query('ROLLBACK')
        .then(() => client.query('DISCARD ALL'))
        .catch((e: Error) => (broken = e));
      throw this.fail(err, sql);
    } finally {
      client.release(broken);
    }
  }

  async query(sql: string, params: SqlParam[] = [], options: QueryOptions = {}): Promise<QueryResult> {
    if (sql.trim() === '') {
      throw new AppError('VALIDATION_ERROR', 'The SQL text is empty; send one statement.', {
        details: [{ path: 'query', message: 'empty' }],
      });
    }
    const started = performance.now();
    const maxRows = Math.min(options.maxRows ?? this.limits.maxRows, this.limits.maxRowsCeiling);
    const timeoutMs = Math.min(options.timeoutMs ?? this.limits.statementTimeoutMs, this.limits.statementTimeoutCeilingMs);
    this.counters.queries++;
    const { result, more, columns } = await this.withTransaction(
      this.options.writable,
      timeoutMs,
      async (client) => {
        const run = await runCapped(client, sql, params, maxRows + 1);
        const columns = await this.columnTypes(client, run.result.fields);
        return { ...run, columns };
      },
      sql,
    );
    const command = (result.command ?? (more ? 'SELECT' : '')).toUpperCase();
    const shaped = shapeRows(columns, result.rows, more, {
      maxRows,
      maxBytes: options.maxBytes ?? this.limits.maxBytes,
      rowMode: options.rowMode ?? 'object',
    });
    return {
      command,
      columns,
      ...shaped,
      ...(WRITE_COMMANDS.has(command) && result.rowCount !== null ? { rowsAffected: result.rowCount } : {}),
      durationMs: Math.round(performance.now() - started),
    };
  }

  private async columnTypes(client: pg.PoolClient, fields: { name: string; dataTypeID: number }[]): Promise<ColumnInfo[]> {
    const unknown = [...new Set(fields.map((f) => f.dataTypeID).filter((oid) => !this.typeNames.has(oid)))];
    if (unknown.length > 0) {
      const res = await client.query<{ oid: number; name: string }>(
        'SELECT oid::int AS oid, pg_catalog.format_type(oid, NULL) AS name FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])',
        [unknown],
      );
      for (const r of res.rows) this.typeNames.set(r.oid, r.name);
    }
    return fields.map((f) => ({ name: f.name, type: this.typeNames.get(f.dataTypeID) ?? `oid:${f.dataTypeID}` }));
  }

  private internal<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return this.withTransaction(false, this.limits.statementTimeoutMs, async (client) => (await client.query<R>(text, values)).rows);
  }

  async listTables(options: { schema?: string } = {}): Promise<TableRef[]> {
    return this.internal<TableRef>(
      `SELECT n.nspname AS schema, c.relname AS name,
              CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END AS type
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
          AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
          AND ($1::text IS NULL OR n.nspname = $1)
        ORDER BY (n.nspname = ANY(pg_catalog.current_schemas(false))) DESC, n.nspname, c.relname
        LIMIT 10000`,
      [options.schema ?? null],
    );
  }

  async describeTable(name: string, schema?: string): Promise<TableDescription> {
    return this.withTransaction(false, this.limits.statementTimeoutMs, async (client) => {
      const found = await client.query<{ oid: number; schema: string; name: string; relkind: string; visible: boolean }>(
        `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind, pg_catalog.pg_table_is_visible(c.oid) AS visible
           FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ($2::text IS NULL OR n.nspname = $2)
            AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          ORDER BY pg_catalog.pg_table_is_visible(c.oid) DESC, n.nspname`,
        [name, schema ?? null],
      );
      const visible = found.rows.filter((r) => r.visible);
      const pick = schema ? found.rows[0] : (visible[0] ?? (found.rows.length === 1 ? found.rows[0] : undefined));
      if (!pick) {
        if (!schema && found.rows.length > 1) {
          throw new AppError(
            'VALIDATION_ERROR',
            `Table "${name}" exists in several schemas (${found.rows.map((r) => r.schema).join(', ')}); name the schema.`,
            {
              details: [{ path: 'schema', message: 'ambiguous table name' }],
            },
          );
        }
        throw new AppError(
          'NOT_FOUND',
          `No table or view named "${name}"${schema ? ` in schema "${schema}"` : ''}; list the tables to see what exists.`,
        );
      }
      const columns = await client.query<{ name: string; type: string; nullable: boolean; default: string | null; position: number }>(
        `SELECT a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
                pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default, a.attnum::int AS position
           FROM pg_catalog.pg_attribute a
           LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
          ORDER BY a.attnum`,
        [pick.oid],
      );
      const indexes = await client.query<{ name: string; unique: boolean; primary: boolean; columns: string[] }>(
        `SELECT i.relname AS name, x.indisunique AS unique, x.indisprimary AS primary,
                ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
                        JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                       ORDER BY k.ord) AS columns
           FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
          WHERE x.indrelid = $1::oid ORDER BY i.relname`,
        [pick.oid],
      );
      const fks = await client.query<{ columns: string[]; ref_schema: string; ref_table: string; ref_columns: string[] }>(
        `SELECT ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, ord)
                        JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.ord) AS columns,
                fn.nspname AS ref_schema, fc.relname AS ref_table,
                ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, ord)
                        JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.ord) AS ref_columns
           FROM pg_catalog.pg_constraint con
           JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
           JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
          WHERE con.conrelid = $1::oid AND con.contype = 'f' ORDER BY con.conname`,
        [pick.oid],
      );
      const primaryKey = indexes.rows.find((i) => i.primary)?.columns ?? [];
      return {
        schema: pick.schema,
        name: pick.name,
        type: pick.relkind === 'v' || pick.relkind === 'm' ? 'view' : 'table',
        columns: columns.rows.map((c) => ({ ...c, primaryKey: primaryKey.includes(c.name) })),
        primaryKey,
        indexes: indexes.rows.map((i) => ({ name: i.name, unique: i.unique, columns: i.columns })),
        foreignKeys: fks.rows.map((f) => ({
          columns: f.columns,
          references: { schema: f.ref_schema, table: f.ref_table, columns: f.ref_columns },
        })),
      } satisfies TableDescription;
    });
  }

  async ping(): Promise<PingResult> {
    const started = performance.now();
    const rows = await this.internal<{ version: string }>("SELECT pg_catalog.current_setting('server_version') AS version");
    return { latencyMs: Math.round((performance.now() - started) * 10) / 10, version: `PostgreSQL ${rows[0].version}` };
  }

  stats(): ConnectionStats {
    return {
      engine: 'postgres',
      ...this.counters,
      pool: { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: this.options.max ?? 5 },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.pending);
    await this.pool.end().catch(() => undefined);
  }
}
