/**
 * Where console sessions are kept. One gateway: in its memory. Several instances sharing
 * SESSION_DATABASE_URL (PostgreSQL, where they already share the call history and the MCP tasks):
 * in its console_sessions table, so a person logged in through one instance stays logged in
 * whichever instance the load balancer picks, and a logout or a revoked key ends the session on all.
 *
 * What is stored is of no use without the browser's cookie: rows are keyed by sha256(session id),
 * and the credential (API key or access token) is sealed with AES-256-GCM under a key derived from
 * the session id, which only the cookie holds. key_hash is an API key's SHA-256 as API_KEYS_FILE
 * holds it (revoking the key ends its sessions); null for access tokens.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppError } from '@mcp-fleet/kit';
import type { HistoryDb } from '../../history/history-db';

export interface StoredSession {
  /** The credential sealed under the session id (seal/unseal). */
  sealed: string;
  /** An API key's hash (sha256:<hex>); undefined for a token. */
  keyHash?: string;
  createdAt: number;
  lastSeen: number;
}

export interface SessionStore {
  readonly kind: 'memory' | 'postgres';
  put(key: string, session: StoredSession): Promise<void>;
  get(key: string): Promise<StoredSession | undefined>;
  touch(key: string, lastSeen: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Ends every session of this API key; how many. */
  deleteByKeyHash(hash: string): Promise<number>;
  /** Forgets sessions idle since `idleBefore` or made before `createdBefore`. */
  sweep(idleBefore: number, createdBefore: number): Promise<void>;
}

const sealKey = (id: string) => createHash('sha256').update(`mcp-fleet console credential\n${id}`).digest();

/** The credential sealed under the session id: base64url(iv | tag | ciphertext). */
export function seal(id: string, credential: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(id), iv);
  const body = Buffer.concat([cipher.update(credential, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The credential, or undefined when `sealed` was not sealed under this id (or was altered). */
export function unseal(id: string, sealed: string): string | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', sealKey(id), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** In this process: the newest `max` sessions (the oldest logins go first beyond it). */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory';
  private readonly sessions = new Map<string, StoredSession>();

  constructor(private readonly max: number) {}

  async put(key: string, session: StoredSession): Promise<void> {
    for (const k of this.sessions.keys()) {
      if (this.sessions.size < this.max) break;
      this.sessions.delete(k);
    }
    this.sessions.set(key, session);
  }

  async get(key: string): Promise<StoredSession | undefined> {
    return this.sessions.get(key);
  }

  async touch(key: string, lastSeen: number): Promise<void> {
    const s = this.sessions.get(key);
    if (s) s.lastSeen = lastSeen;
  }

  async delete(key: string): Promise<void> {
    this.sessions.delete(key);
  }

  async deleteByKeyHash(hash: string): Promise<number> {
    let n = 0;
    for (const [key, s] of this.sessions)
      if (s.keyHash === hash) {
        this.sessions.delete(key);
        n += 1;
      }
    return n;
  }

  async sweep(idleBefore: number, createdBefore: number): Promise<void> {
    for (const [key, s] of this.sessions) if (s.lastSeen < idleBefore || s.createdAt < createdBefore) this.sessions.delete(key);
  }
}

interface Row {
  sealed: string;
  key_hash: string | null;
  created_at: number;
  last_seen: number;
}

/** In the PostgreSQL the instances share (the history's database, table console_sessions). */
export class DatabaseSessionStore implements SessionStore {
  readonly kind = 'postgres';

  constructor(private readonly db: () => Promise<HistoryDb | undefined>) {}

  private async open(): Promise<HistoryDb> {
    const db = await this.db();
    if (!db) throw unavailable('it could not be opened');
    return db;
  }

  /** One statement; a store out of reach is the console's 503, not a 500 (nor a logout). */
  private async query<T>(work: (db: HistoryDb) => Promise<T>): Promise<T> {
    const db = await this.open();
    try {
      return await work(db);
    } catch (err) {
      throw unavailable((err as Error).message);
    }
  }

  async put(key: string, s: StoredSession): Promise<void> {
    await this.query((db) =>
      db.run('INSERT INTO console_sessions (session_key, sealed, key_hash, created_at, last_seen) VALUES (?, ?, ?, ?, ?)', [
        key,
        s.sealed,
        s.keyHash ?? null,
        s.createdAt,
        s.lastSeen,
      ]),
    );
  }

  async get(key: string): Promise<StoredSession | undefined> {
    const row = await this.query((db) =>
      db.get<Row>('SELECT sealed, key_hash, created_at, last_seen FROM console_sessions WHERE session_key = ?', [key]),
    );
    return row
      ? { sealed: row.sealed, keyHash: row.key_hash ?? undefined, createdAt: Number(row.created_at), lastSeen: Number(row.last_seen) }
      : undefined;
  }

  async touch(key: string, lastSeen: number): Promise<void> {
    await this.query((db) => db.run('UPDATE console_sessions SET last_seen = ? WHERE session_key = ?', [lastSeen, key]));
  }

  async delete(key: string): Promise<void> {
    await this.query((db) => db.run('DELETE FROM console_sessions WHERE session_key = ?', [key]));
  }

  async deleteByKeyHash(hash: string): Promise<number> {
    const n = await this.query((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM console_sessions WHERE key_hash = ?', [hash]));
    await this.query((db) => db.run('DELETE FROM console_sessions WHERE key_hash = ?', [hash]));
    return Number(n?.n ?? 0);
  }

  async sweep(idleBefore: number, createdBefore: number): Promise<void> {
    await this.query((db) => db.run('DELETE FROM console_sessions WHERE last_seen < ? OR created_at < ?', [idleBefore, createdBefore]));
  }
}

const unavailable = (why: string) =>
  new AppError('UPSTREAM_UNAVAILABLE', `The console's session store (SESSION_DATABASE_URL) cannot be reached: ${why.slice(0, 200)}`);
