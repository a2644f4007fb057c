import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/**
 * The admin credential: SECRETS_UI_ADMIN_TOKEN, else the content of SECRETS_UI_ADMIN_TOKEN_FILE,
 * else the content of the store token file. Files are read on use, so rotating them needs no restart.
 */
export function adminCredential(options: { token?: string; tokenFile?: string; storeTokenFile: string }): () => string | undefined {
  const readFile = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  };
  return () => options.token ?? (options.tokenFile ? readFile(options.tokenFile) : readFile(options.storeTokenFile));
}

export interface Session {
  id: string;
  actor: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
}

/** Server-side UI sessions (in memory: a restart logs everyone out), ended after ttlMs without use. */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxSessions = 1000,
  ) {}

  create(actor: string, now = Date.now()): Session {
    this.sweep(now);
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      actor,
      csrf: randomBytes(32).toString('base64url'),
      createdAt: now,
      lastSeen: now,
    };
    this.sessions.set(session.id, session);
    if (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return session;
  }

  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (now - s.lastSeen > this.ttlMs) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }

  private sweep(now: number): void {
    for (const [id, s] of this.sessions) if (now - s.lastSeen > this.ttlMs) this.sessions.delete(id);
  }
}

/** A self-declared operator name for the audit trail: printable, short. */
export function cleanActor(raw: unknown, fallback: string): string {
  const s =
    typeof raw === 'string'
      ? raw
          .replace(/[^\p{L}\p{N} ._@-]/gu, '')
          .trim()
          .slice(0, 64)
      : '';
  return s || fallback;
}
