import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export type SqlParams = unknown[] | Record<string, unknown>;

/**
 * A small promise wrapper over sqlite3, opened in WAL mode with a busy timeout. One connection:
 * while a transaction() runs, statements from other callers wait for it instead of joining it.
 */
export class SqliteDb {
  private readonly inTransaction = new AsyncLocalStorage<true>();
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

  /** Waits for another caller's open transaction; statements inside a transaction go straight through. */
  private async gate(): Promise<void> {
    if (this.inTransaction.getStore()) return;
    let current: Promise<void>;
    do {
      current = this.idle;
      await current;
    } while (current !== this.idle);
  }

  async run(sql: string, params: SqlParams = []): Promise<{ lastID: number; changes: number }> {
    await this.gate();
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ lastID: this.lastID, changes: this.changes });
      });
    });
  }

  async get<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    await this.gate();
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined)));
    });
  }

  async all<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T[]> {
    await this.gate();
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])));
    });
  }

  async exec(sql: string): Promise<void> {
    await this.gate();
    return this.rawExec(sql);
  }

  private rawExec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  /** Runs fn inside BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error); transactions never overlap. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) return fn(); // nested: part of the outer transaction
    const previous = this.idle;
    let release!: () => void;
    this.idle = new Promise<void>((r) => (release = r));
    await previous;
    try {
      return await this.inTransaction.run(true, async () => {
        await this.rawExec('BEGIN IMMEDIATE');
        try {
          const out = await fn();
          await this.rawExec('COMMIT');
          return out;
        } catch (err) {
          await this.rawExec('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
    } finally {
      release();
    }
  }

  /**
   * Runs writes known up front in one BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error), in order.
   * Unlike transaction() it needs no async context (whose promise hooks, once on, tax every
   * await in the process); inside a transaction() the statements simply join it.
   */
  async batch(statements: readonly { sql: string; params?: SqlParams }[]): Promise<void> {
    if (this.inTransaction.getStore()) {
      for (const s of statements) await this.run(s.sql, s.params);
      return;
    }
    const previous = this.idle;
    let release!: () => void;
    this.idle = new Promise<void>((r) => (release = r));
    await previous;
    try {
      await this.rawExec('BEGIN IMMEDIATE');
      try {
        for (const s of statements) {
          await new Promise<void>((resolve, reject) => this.db.run(s.sql, s.params ?? [], (err) => (err ? reject(err) : resolve())));
        }
        await this.rawExec('COMMIT');
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
