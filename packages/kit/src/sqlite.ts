import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export type SqlParams = unknown[] | Record<string, unknown>;

/** A small promise wrapper over sqlite3, opened in WAL mode with a busy timeout. */
export class SqliteDb {
  private constructor(
    readonly db: sqlite3.Database,
    readonly file: string,
  ) {}

  static async open(file: string, options: { readonly?: boolean } = {}): Promise<SqliteDb> {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const mode = options.readonly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(d)));
    });
    const wrapped = new SqliteDb(db, file);
    db.configure('busyTimeout', 5000);
    if (!options.readonly && file !== ':memory:') await wrapped.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;');
    return wrapped;
  }

  run(sql: string, params: SqlParams = []): Promise<{ lastID: number; changes: number }> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ lastID: this.lastID, changes: this.changes });
      });
    });
  }

  get<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined)));
    });
  }

  all<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])));
    });
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.exec('BEGIN IMMEDIATE');
    try {
      const out = await fn();
      await this.exec('COMMIT');
      return out;
    } catch (err) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }
}
