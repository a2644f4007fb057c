import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export type SqlParams = unknown[] | Record<string, unknown>;

export interface BatchStatement {
  sql: string;
  params?: SqlParams;
}

/** The statements of an open SqliteDb.transaction(): they run inside it (see transaction()). */
export interface SqliteTx {
  run(sql: string, params?: SqlParams): Promise<{ lastID: number; changes: number }>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  exec(sql: string): Promise<void>;
  /** The statements in order, as part of this transaction. */
  batch(statements: readonly BatchStatement[]): Promise<void>;
  /** Nested: runs fn with this same handle, in this same transaction. */
  transaction<T>(fn: (tx: SqliteTx) => Promise<T>): Promise<T>;
}

/**
 * A small promise wrapper over sqlite3, opened in WAL mode with a busy timeout. One connection:
 * while a transaction() or batch() runs, statements on the SqliteDb wait for it instead of joining
 * it; a transaction's own statements go through the handle it gets.
 */
export class SqliteDb {
  private idle: Promise<void> = Promise.resolve();

  private constructor(
    readonly db: sqlite3.Database,
    readonly file: string,
  ) {}

  /**
   * `pageSize` is a new file's page size (bytes, a power of two): set before the file is first
   * written, it takes; a file made before keeps its own (changing it would take a VACUUM).
   */
  static async open(file: string, options: { readonly?: boolean; pageSize?: number } = {}): Promise<SqliteDb> {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const mode = options.readonly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(d)));
    });
    const wrapped = new SqliteDb(db, file);
    db.configure('busyTimeout', 5000);
    const pageSize = options.pageSize ? `PRAGMA page_size=${Math.trunc(options.pageSize)}; ` : '';
    if (!options.readonly && file !== ':memory:') await wrapped.exec(`${pageSize}PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;`);
    return wrapped;
  }

  /** Waits for any open transaction (a transaction's own statements go through its handle, never here). */
  private async gate(): Promise<void> {
    let current: Promise<void>;
    do {
      current = this.idle;
      await current;
    } while (current !== this.idle);
  }

  async run(sql: string, params: SqlParams = []): Promise<{ lastID: number; changes: number }> {
    await this.gate();
    return this.rawRun(sql, params);
  }

  async get<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    await this.gate();
    return this.rawGet<T>(sql, params);
  }

  async all<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T[]> {
    await this.gate();
    return this.rawAll<T>(sql, params);
  }

  async exec(sql: string): Promise<void> {
    await this.gate();
    return this.rawExec(sql);
  }

  private rawRun(sql: string, params: SqlParams): Promise<{ lastID: number; changes: number }> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ lastID: this.lastID, changes: this.changes });
      });
    });
  }

  private rawGet<T>(sql: string, params: SqlParams): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined)));
    });
  }

  private rawAll<T>(sql: string, params: SqlParams): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])));
    });
  }

  private rawExec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  private async rawBatch(statements: readonly BatchStatement[]): Promise<void> {
    for (const s of statements) await this.rawRun(s.sql, s.params ?? []);
  }

  /**
   * Runs fn inside BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error, then the error is rethrown);
   * transactions never overlap. fn's statements go through `tx`, straight to the connection inside
   * the transaction; this SqliteDb's own methods, whoever calls them meanwhile, wait until the
   * transaction has ended. So inside fn use only `tx`: a statement on the SqliteDb itself awaited
   * there waits for the transaction it is part of, which never ends (a deadlock).
   *
   * Nested: `tx.transaction(g)` runs g(tx) in the same transaction (no savepoint; g's error, if fn
   * lets it through, rolls back the whole transaction). `tx` rejects every call once fn has settled.
   *
   * The handle is passed explicitly rather than found through an AsyncLocalStorage: in Node 20 the
   * first AsyncLocalStorage.run() turns on promise hooks for the rest of the process, and they
   * make every later await there about three times as costly.
   */
  async transaction<T>(fn: (tx: SqliteTx) => Promise<T>): Promise<T> {
    let open = true;
    const check = (): void => {
      if (!open) throw new Error('SqliteDb: a transaction handle was used after its transaction ended');
    };
    const tx: SqliteTx = {
      run: async (sql, params = []) => {
        check();
        return this.rawRun(sql, params);
      },
      get: async <R>(sql: string, params: SqlParams = []) => {
        check();
        return this.rawGet<R>(sql, params);
      },
      all: async <R>(sql: string, params: SqlParams = []) => {
        check();
        return this.rawAll<R>(sql, params);
      },
      exec: async (sql) => {
        check();
        return this.rawExec(sql);
      },
      batch: async (statements) => {
        check();
        return this.rawBatch(statements);
      },
      transaction: async (inner) => {
        check();
        return inner(tx);
      },
    };
    return this.exclusive(async () => {
      try {
        return await fn(tx);
      } finally {
        // before COMMIT: a later call, by something fn started and left running, is refused, not run outside the transaction
        open = false;
      }
    });
  }

  /**
   * Runs writes known up front in one BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error), in order,
   * apart from other callers' statements as a transaction() is. Inside a transaction() use
   * `tx.batch`, which runs them as part of it.
   */
  batch(statements: readonly BatchStatement[]): Promise<void> {
    return this.exclusive(() => this.rawBatch(statements));
  }

  /** Waits for the open transaction, if any, then runs body between BEGIN IMMEDIATE and COMMIT (ROLLBACK on error). */
  private async exclusive<T>(body: () => Promise<T>): Promise<T> {
    const previous = this.idle;
    let release!: () => void;
    this.idle = new Promise<void>((r) => (release = r));
    await previous;
    try {
      await this.rawExec('BEGIN IMMEDIATE');
      try {
        const out = await body();
        await this.rawExec('COMMIT');
        return out;
      } catch (err) {
        await this.rawExec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      release();
    }
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }
}
