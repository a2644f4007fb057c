import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { AppError } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import sqlite3 from 'sqlite3';
import { mapSqliteError } from './errors';
import { DEFAULT_LIMITS, pickLimits, type ConnectionLimits } from './limits';
import { leadingWords, scanStatements, withParamsAsNull, type Token } from './sqlite-text';
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

export interface SqliteConnectionOptions extends Partial<ConnectionLimits> {
  name: string;
  file: string;
  writable: boolean;
  /** Read-only connections: create an empty database first when the file does not exist. */
  createIfMissing?: boolean;
  /** Largest string or blob a statement may build or return (SQLITE_LIMIT_LENGTH). */
  maxValueBytes?: number;
}

export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;

const TRANSACTION_CONTROL = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);
const WRITE_VERBS = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE']);
const READ_VERBS = new Set(['SELECT', 'VALUES']);

/** The verb that decides what a statement does: for WITH, the first verb outside the CTE parentheses. */
function mainVerb(tokens: Token[], keyword: string): string {
  if (keyword !== 'WITH') return keyword;
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'semi') break;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.kind === 'word') {
      const w = t.text.toUpperCase();
      if (READ_VERBS.has(w) || WRITE_VERBS.has(w)) return w;
    }
  }
  return keyword;
}

/** The verb a statement runs, looking through EXPLAIN [QUERY PLAN] (which compiles the statement it names). */
function runVerb(tokens: Token[], keyword: string): string {
  if (keyword !== 'EXPLAIN') return mainVerb(tokens, keyword);
  let i = 0;
  for (; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'ws') continue;
    if (t.kind === 'word' && ['EXPLAIN', 'QUERY', 'PLAN'].includes(t.text.toUpperCase())) continue;
    break;
  }
  const rest = tokens.slice(i);
  const first = rest[0];
  return first && first.kind === 'word' ? mainVerb(rest, first.text.toUpperCase()) : '';
}

/**
 * Read-only connections: temporary objects cannot be made (query_only covers the temp database,
 * which SQLITE_OPEN_READONLY does not) and schema-defined views and triggers may call no function
 * with side effects. Set at open and again before every call, since EXPLAIN or PRAGMA can flip them.
 */
const READ_ONLY_PRAGMAS = 'PRAGMA query_only = ON; PRAGMA trusted_schema = OFF;';

function storageClass(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'real';
  if (typeof v === 'string') return 'text';
  if (Buffer.isBuffer(v)) return 'blob';
  return typeof v;
}

/**
 * A named SQLite database. Calls are serialized on its one connection (so changes(), interrupt()
 * and temporary helpers never mix between callers). Every connection: ATTACH is disabled by limit
 * (SQLITE_LIMIT_ATTACHED = 0, which also stops VACUUM INTO) and extensions stay off (node-sqlite3
 * enables loading only inside its own loadExtension, never called). Read-only connections are
 * opened SQLITE_OPEN_READONLY, keep query_only ON and trusted_schema OFF (READ_ONLY_PRAGMAS), and run
 * queries only (SELECT, VALUES, WITH ... SELECT, EXPLAIN of those): no PRAGMA, whose effects
 * outlive the call and, for some, reach the whole process.
 */
export class SqliteConnection implements SqlConnection {
  readonly info: ConnectionInfo;
  private readonly limits: ConnectionLimits;
  private queue: Promise<unknown> = Promise.resolve();
  private counters = { queries: 0, errors: 0 };

  private constructor(
    readonly db: SqliteDb,
    private readonly options: SqliteConnectionOptions,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...pickLimits(options) };
    this.info = { name: options.name, engine: 'sqlite', writable: options.writable, target: `sqlite:${options.file}` };
  }

  static async open(options: SqliteConnectionOptions): Promise<SqliteConnection> {
    if (!options.writable && options.createIfMissing && options.file !== ':memory:' && !fs.existsSync(options.file)) {
      const created = await SqliteDb.open(options.file);
      await created.close();
    }
    const db = await SqliteDb.open(options.file, { readonly: !options.writable });
    // No ATTACH: it would reach (or create) any database file the process can open.
    db.db.configure('limit', sqlite3.LIMIT_ATTACHED, 0);
    // No single string or blob past this size (e.g. SELECT randomblob(900000000) answers SQLITE_TOOBIG).
    db.db.configure('limit', sqlite3.LIMIT_LENGTH, options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES);
    if (!options.writable) await db.exec(READ_ONLY_PRAGMAS);
    return new SqliteConnection(db, options);
  }

  /** Run `fn` alone on the connection. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private fail(err: unknown, sql?: string): AppError {
    this.counters.errors++;
    return mapSqliteError(err, sql);
  }

  async query(sql: string, params: SqlParam[] = [], options: QueryOptions = {}): Promise<QueryResult> {
    const scan = scanStatements(sql);
    if (scan.count === 0) {
      throw new AppError('VALIDATION_ERROR', 'The SQL text holds no statement; send one statement.', {
        details: [{ path: 'query', message: 'empty' }],
      });
    }
    if (scan.count > 1) {
      throw new AppError('VALIDATION_ERROR', 'Only one SQL statement per call is accepted; send the statements one at a time.', {
        details: { engine: 'sqlite', position: (scan.secondStart ?? 0) + 1, reason: 'multiple statements' },
      });
    }
    const words = leadingWords(scan.tokens);
    if (words[0] === 'ATTACH' || words[0] === 'DETACH' || (words[0] === 'VACUUM' && words.includes('INTO'))) {
      throw new AppError(
        'FORBIDDEN',
        `${words[0]}${words[0] === 'VACUUM' ? ' INTO' : ''} is not allowed: it reads or writes database files outside this connection.`,
      );
    }
    if (TRANSACTION_CONTROL.has(scan.keyword)) {
      throw new AppError('VALIDATION_ERROR', `${scan.keyword} is not accepted: every call runs as its own transaction.`, {
        details: [{ path: 'query', message: 'transaction control statement' }],
      });
    }
    if (params.some((p) => Array.isArray(p))) {
      throw new AppError(
        'VALIDATION_ERROR',
        'SQLite binds only scalar parameters (string, number, boolean, null); expand arrays into several placeholders.',
        {
          details: [{ path: 'params', message: 'array parameter' }],
        },
      );
    }
    const started = performance.now();
    const maxRows = Math.min(options.maxRows ?? this.limits.maxRows, this.limits.maxRowsCeiling);
    const timeoutMs = Math.min(options.timeoutMs ?? this.limits.statementTimeoutMs, this.limits.statementTimeoutCeilingMs);
    const verb = mainVerb(scan.tokens, scan.keyword);
    if (!this.options.writable && !READ_VERBS.has(runVerb(scan.tokens, scan.keyword))) {
      throw new AppError(
        'FORBIDDEN',
        `This connection is read-only: it runs queries only (SELECT, VALUES, WITH ... SELECT, EXPLAIN of those), not ${scan.keyword}.`,
        { details: { engine: 'sqlite', reason: 'read-only connection' } },
      );
    }
    this.counters.queries++;
    return this.exclusive(async () => {
      const raw = this.db.db;
      if (!this.options.writable) await this.db.exec(READ_ONLY_PRAGMAS);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        raw.interrupt();
      }, timeoutMs);
      const onAbort = () => raw.interrupt();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      let stmt: sqlite3.Statement | undefined;
      const rows: Record<string, unknown>[] = [];
      try {
        stmt = await new Promise<sqlite3.Statement>((resolve, reject) => {
          const s: sqlite3.Statement = raw.prepare(sql, params, (err: Error | null) => (err ? reject(err) : resolve(s)));
        });
        while (rows.length <= maxRows) {
          const row = await new Promise<Record<string, unknown> | undefined>((resolve, reject) =>
            stmt!.get((err: Error | null, r?: Record<string, unknown>) => (err ? reject(err) : resolve(r))),
          );
          if (row === undefined) break;
          rows.push(row);
          if (timedOut) throw Object.assign(new Error('SQLITE_INTERRUPT: interrupted'), { code: 'SQLITE_INTERRUPT' });
        }
      } catch (err) {
        throw this.fail(err, sql);
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (stmt) await new Promise<void>((resolve) => stmt!.finalize(() => resolve()));
      }
      const more = rows.length > maxRows;
      let rowsAffected: number | undefined;
      if (WRITE_VERBS.has(verb)) {
        rowsAffected = (await this.db.get<{ n: number }>('SELECT changes() AS n'))?.n;
      }
      const columns = await this.resultColumns(scan.tokens, verb, rows);
      const keys = rows.length > 0 ? Object.keys(rows[0]) : columns.map((c) => c.name);
      const arrays = rows.map((r) => keys.map((k) => r[k]));
      const shaped = shapeRows(columns, arrays, more, {
        maxRows,
        maxBytes: options.maxBytes ?? this.limits.maxBytes,
        rowMode: options.rowMode ?? 'object',
      });
      return {
        command: verb,
        columns,
        ...shaped,
        ...(rowsAffected !== undefined ? { rowsAffected } : {}),
        durationMs: Math.round(performance.now() - started),
      };
    });
  }

  /**
   * Names and types of the result columns. node-sqlite3 exposes neither, so a read statement is
   * compiled as a temporary view (parameters as NULL) and its declared types read with
   * table_info; expressions without a declared type get the storage class of their first value.
   */
  private async resultColumns(tokens: Token[], verb: string, rows: Record<string, unknown>[]): Promise<ColumnInfo[]> {
    const keys = rows.length > 0 ? Object.keys(rows[0]) : [];
    let declared: { name: string; type: string }[] = [];
    if (READ_VERBS.has(verb)) {
      const view = `_mcp_describe_${randomBytes(6).toString('hex')}`;
      const body = withParamsAsNull(tokens).replace(/;\s*$/, '');
      // The service's own temporary view, on a read-only connection too (query_only is set again before the next call).
      if (!this.options.writable) await this.db.exec('PRAGMA query_only = OFF');
      try {
        // run(), not exec(): one prepared statement, so nothing after the caller's text could run here.
        await this.db.run(`CREATE TEMP VIEW "${view}" AS ${body}`);
        declared = await this.db.all<{ name: string; type: string }>(`SELECT name, type FROM pragma_table_info('${view}', 'temp')`);
      } catch {
        declared = [];
      } finally {
        await this.db.exec(`DROP VIEW IF EXISTS temp."${view}"`).catch(() => undefined);
        if (!this.options.writable) await this.db.exec(READ_ONLY_PRAGMAS).catch(() => undefined);
      }
    }
    const names = keys.length > 0 ? keys : declared.map((d) => d.name);
    const sameShape = declared.length === names.length;
    return names.map((name, i) => {
      const decl = sameShape ? declared[i].type : '';
      const observed = rows.map((r) => storageClass(r[name])).find((t) => t !== undefined);
      return { name, type: decl ? decl.toLowerCase() : (observed ?? 'null') };
    });
  }

  listTables(options: { schema?: string } = {}): Promise<TableRef[]> {
    if (options.schema && options.schema !== 'main') return Promise.resolve([]);
    return this.exclusive(() =>
      this.db
        .all<TableRef>(
          `SELECT 'main' AS schema, name, type FROM sqlite_schema
            WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 10000`,
        )
        .catch((err) => {
          throw this.fail(err);
        }),
    );
  }

  describeTable(name: string, schema?: string): Promise<TableDescription> {
    return this.exclusive(async () => {
      const found =
        schema && schema !== 'main'
          ? undefined
          : ((await this.db.get<{ name: string; type: 'table' | 'view' }>(
              `SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
              [name],
            )) ??
            (await this.db.get<{ name: string; type: 'table' | 'view' }>(
              `SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
              [name],
            )));
      if (!found) {
        throw new AppError(
          'NOT_FOUND',
          `No table or view named "${name}"${schema ? ` in schema "${schema}"` : ''}; list the tables to see what exists.`,
        );
      }
      const cols = await this.db.all<{
        cid: number;
        name: string;
        type: string;
        notnull: number;
        dflt_value: string | null;
        pk: number;
        hidden: number;
      }>('SELECT cid, name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid', [
        found.name,
      ]);
      const indexList = await this.db.all<{ name: string; unique: number }>(
        'SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name',
        [found.name],
      );
      const indexes = [];
      for (const ix of indexList) {
        const ixCols = await this.db.all<{ name: string | null }>('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [ix.name]);
        indexes.push({ name: ix.name, unique: ix.unique === 1, columns: ixCols.map((c) => c.name ?? '(expression)') });
      }
      const fkRows = await this.db.all<{ id: number; table: string; from: string; to: string | null }>(
        'SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq',
        [found.name],
      );
      const foreignKeys = new Map<number, TableDescription['foreignKeys'][number]>();
      for (const f of fkRows) {
        const fk = foreignKeys.get(f.id) ?? { columns: [], references: { schema: 'main', table: f.table, columns: [] } };
        fk.columns.push(f.from);
        if (f.to !== null) fk.references.columns.push(f.to);
        foreignKeys.set(f.id, fk);
      }
      const primaryKey = cols
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      return {
        schema: 'main',
        name: found.name,
        type: found.type,
        columns: cols.map((c, i) => ({
          name: c.name,
          type: (c.type || 'any').toLowerCase(),
          nullable: c.notnull === 0,
          default: c.dflt_value,
          primaryKey: c.pk > 0,
          position: i + 1,
        })),
        primaryKey,
        indexes,
        foreignKeys: [...foreignKeys.values()],
      } satisfies TableDescription;
    }).catch((err) => {
      throw err instanceof AppError ? err : this.fail(err);
    });
  }

  ping(): Promise<PingResult> {
    return this.exclusive(async () => {
      const started = performance.now();
      const row = await this.db.get<{ v: string }>('SELECT sqlite_version() AS v');
      return { latencyMs: Math.round((performance.now() - started) * 10) / 10, version: `SQLite ${row?.v}` };
    });
  }

  stats(): ConnectionStats {
    let sizeBytes: number | null = null;
    try {
      sizeBytes = fs.statSync(this.options.file).size;
    } catch {
      sizeBytes = null;
    }
    return { engine: 'sqlite', ...this.counters, file: { path: this.options.file, sizeBytes } };
  }

  async close(): Promise<void> {
    await this.queue;
    await this.db.close().catch(() => undefined);
  }
}
