import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { decodeCursor, encodeCursor, type Page } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';

export interface WebhookRecord {
  id: string;
  targetUrl: string;
  events: string[];
  description?: string;
  hasSecret: boolean;
  createdAt: string;
}

export type DeliveryStatus = 'delivered' | 'failed' | 'rejected' | 'skipped';

export interface DeliveryLog {
  id: number;
  deliveryId: string;
  webhookId: string;
  event: string;
  status: DeliveryStatus;
  reason?: string;
  receivedAt: string;
  requestBytes: number;
  targetStatus?: number;
  durationMs: number;
}

interface WebhookRow {
  id: string;
  target_url: string;
  events: string;
  description: string | null;
  secret: string | null;
  created_at: string;
}

interface LogRow {
  id: number;
  delivery_id: string;
  webhook_id: string;
  event: string;
  status: DeliveryStatus;
  reason: string | null;
  received_at: string;
  request_bytes: number;
  target_status: number | null;
  duration_ms: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  target_url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT,
  secret TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  received_at TEXT NOT NULL,
  request_bytes INTEGER NOT NULL,
  target_status INTEGER,
  duration_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_logs_by_hook ON webhook_logs (webhook_id, id);
CREATE TABLE IF NOT EXISTS webhook_signatures (
  key TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_signatures_by_expiry ON webhook_signatures (expires_at);
`;

export const WEBHOOK_ID = /^wh_[A-Za-z0-9_-]{22}$/;

function toRecord(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    targetUrl: row.target_url,
    events: JSON.parse(row.events) as string[],
    ...(row.description ? { description: row.description } : {}),
    hasSecret: row.secret !== null,
    createdAt: row.created_at,
  };
}

function toLog(row: LogRow): DeliveryLog {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    webhookId: row.webhook_id,
    event: row.event,
    status: row.status,
    ...(row.reason ? { reason: row.reason } : {}),
    receivedAt: row.received_at,
    requestBytes: row.request_bytes,
    ...(row.target_status !== null ? { targetStatus: row.target_status } : {}),
    durationMs: row.duration_ms,
  };
}

/** Webhook definitions and their bounded delivery log, in one SQLite file (mode 0600: it holds secrets). */
export class WebhookStore {
  private constructor(
    private readonly db: SqliteDb,
    private readonly logMax: number,
  ) {}

  static async open(file: string, logMax: number): Promise<WebhookStore> {
    const db = await SqliteDb.open(file);
    await db.exec(SCHEMA);
    if (file !== ':memory:') await fs.chmod(file, 0o600);
    return new WebhookStore(db, logMax);
  }

  /**
   * Remembers an accepted inbound signature until `expiresAt` (ms); false when it was already
   * remembered, i.e. a replay. Kept in the same file, so a restart does not reopen the window.
   */
  async rememberSignature(key: string, expiresAt: number): Promise<boolean> {
    const now = Date.now();
    await this.db.run('DELETE FROM webhook_signatures WHERE expires_at <= ?', [now]);
    const { changes } = await this.db.run('INSERT OR IGNORE INTO webhook_signatures (key, expires_at) VALUES (?, ?)', [key, expiresAt]);
    return changes === 1;
  }

  async ping(): Promise<void> {
    await this.db.get('SELECT 1');
  }

  async count(): Promise<number> {
    return (await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhooks'))?.n ?? 0;
  }

  async create(input: { targetUrl: string; events: string[]; description?: string; secret: string | null }): Promise<WebhookRecord> {
    const row: WebhookRow = {
      id: `wh_${randomBytes(16).toString('base64url')}`,
      target_url: input.targetUrl,
      events: JSON.stringify(input.events),
      description: input.description ?? null,
      secret: input.secret,
      created_at: new Date().toISOString(),
    };
    await this.db.run('INSERT INTO webhooks (id, target_url, events, description, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      row.id,
      row.target_url,
      row.events,
      row.description,
      row.secret,
      row.created_at,
    ]);
    return toRecord(row);
  }

  /** The definition and, for signing and verification only, its secret. */
  async getWithSecret(id: string): Promise<{ webhook: WebhookRecord; secret: string | null } | undefined> {
    if (!WEBHOOK_ID.test(id)) return undefined;
    const row = await this.db.get<WebhookRow>('SELECT * FROM webhooks WHERE id = ?', [id]);
    return row ? { webhook: toRecord(row), secret: row.secret } : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!WEBHOOK_ID.test(id)) return false;
    return (await this.db.run('DELETE FROM webhooks WHERE id = ?', [id])).changes > 0;
  }

  async list(limit: number, cursor?: string): Promise<Page<WebhookRecord>> {
    const offset = decodeCursor(cursor);
    const rows = await this.db.all<WebhookRow>('SELECT * FROM webhooks ORDER BY created_at, id LIMIT ? OFFSET ?', [limit + 1, offset]);
    const items = rows.slice(0, limit).map(toRecord);
    return { items, total: await this.count(), ...(rows.length > limit ? { nextCursor: encodeCursor(offset + limit) } : {}) };
  }

  async log(entry: Omit<DeliveryLog, 'id'>): Promise<void> {
    await this.db.run(
      `INSERT INTO webhook_logs (delivery_id, webhook_id, event, status, reason, received_at, request_bytes, target_status, duration_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        entry.deliveryId,
        entry.webhookId,
        entry.event,
        entry.status,
        entry.reason ?? null,
        entry.receivedAt,
        entry.requestBytes,
        entry.targetStatus ?? null,
        entry.durationMs,
      ],
    );
    await this.db.run('DELETE FROM webhook_logs WHERE id <= (SELECT id FROM webhook_logs ORDER BY id DESC LIMIT 1 OFFSET ?)', [
      this.logMax,
    ]);
  }

  /** Newest first. The cursor is keyset (the last id seen), so new deliveries do not shift pages. */
  async logs(options: { limit: number; cursor?: string; webhookId?: string; status?: DeliveryStatus }): Promise<Page<DeliveryLog>> {
    const before = options.cursor ? decodeCursor(options.cursor) : Number.MAX_SAFE_INTEGER;
    const where = ['id < ?'];
    const params: unknown[] = [before];
    if (options.webhookId) {
      where.push('webhook_id = ?');
      params.push(options.webhookId);
    }
    if (options.status) {
      where.push('status = ?');
      params.push(options.status);
    }
    const rows = await this.db.all<LogRow>(`SELECT * FROM webhook_logs WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, [
      ...params,
      options.limit + 1,
    ]);
    const items = rows.slice(0, options.limit).map(toLog);
    const last = items[items.length - 1];
    return { items, ...(rows.length > options.limit && last ? { nextCursor: encodeCursor(last.id) } : {}) };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
