/**
 * notifications/tasks across gateway instances that share a PostgreSQL task store. Each instance
 * keeps one dedicated connection that LISTENs on the store's task channel and, after it changed a
 * task, says `pg_notify(channel, <taskId>)` on that same connection. The other instances read the
 * row and emit it as their own change (tasks.ts); the instance that made the change has emitted it
 * already and ignores its own notification (it comes from its own backend process id). A dropped
 * connection is opened again with backoff; notifications sent while it was down are lost, so the
 * manager re-reads the tasks its listeners follow once it is back.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@mcp-fleet/kit';
import type pg from 'pg';
import type { HistoryDb } from '../history/history-db';

export interface TaskChannelOptions {
  /** SESSION_DATABASE_URL: the listening connection is opened beside the pool. */
  url: string;
  /** The pool of the same database: names the channel, and sends while the connection is down. */
  db: HistoryDb;
  /** This gateway instance (its connection's application_name, to find it in pg_stat_activity). */
  instance: string;
  logger: Logger;
  /** A task changed on another instance. */
  onTask: (taskId: string) => void;
  /** The connection is back after a drop: what was notified meanwhile never arrived. */
  onResync: () => void;
  /** First reconnect delay, doubled per failure up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A quiet connection is checked this often (a half-open one is noticed and replaced). */
  pingMs?: number;
}

const PREFIX = 'mcp_fleet_tasks';
/** PostgreSQL identifiers (channel names) are at most 63 bytes. */
const MAX_CHANNEL = 63;

/**
 * The channel of a task table: one per schema, so that gateways of unrelated deployments (or test
 * runs) sharing a database with their own schemas do not wake each other.
 */
export function channelOf(schema: string): string {
  if (schema === 'public') return PREFIX;
  const name = `${PREFIX}:${schema}`;
  return Buffer.byteLength(name) <= MAX_CHANNEL ? name : `${PREFIX}:${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

export class TaskChannel {
  private client?: pg.Client;
  private channel = PREFIX;
  private retry?: NodeJS.Timeout;
  private ping?: NodeJS.Timeout;
  private delay: number;
  private everConnected = false;
  private closed = false;
  private heard = 0;

  constructor(private readonly options: TaskChannelOptions) {
    this.delay = options.backoffMs ?? 500;
  }

  /** Notifications heard from other instances (for tests and logs). */
  get received(): number {
    return this.heard;
  }

  /** True while the listening connection is open. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Names the channel and makes the first connection attempt (a failed one is retried in the background). */
  async start(): Promise<void> {
    const row = await this.options.db.get<{ schema: string }>('SELECT current_schema() AS schema');
    this.channel = channelOf(row?.schema ?? 'public');
    await this.connect();
  }

  private async connect(): Promise<void> {
    this.retry = undefined;
    if (this.closed) return;
    // pg is loaded with the first channel (a PostgreSQL-backed task store), not at start
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Client } = require('pg') as typeof pg;
    const client = new Client({
      connectionString: this.options.url,
      application_name: `mcp-fleet-tasks:${this.options.instance}`,
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      query_timeout: 10_000,
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    let pid: number | undefined;
    client.on('notification', (msg) => {
      // Our own NOTIFY: this instance emitted the change when it made it.
      if (msg.processId === pid || !msg.payload) return;
      this.heard++;
      this.options.onTask(msg.payload);
    });
    try {
      await client.connect();
      pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      // its 'error' and 'end' events are no longer heard (lost() ignores a client that is not the current one)
      void client.end().catch(() => undefined);
      this.options.logger.warn('notifications/tasks from other gateway instances are paused: PostgreSQL LISTEN failed; retrying', {
        err,
        retryMs: this.delay,
      });
      this.schedule();
      return;
    }
    if (this.closed) return void client.end().catch(() => undefined);
    this.client = client;
    this.delay = this.options.backoffMs ?? 500;
    this.ping = setInterval(
      () => void client.query('SELECT 1').catch((err: unknown) => this.lost(client, err)),
      this.options.pingMs ?? 30_000,
    );
    this.ping.unref();
    if (this.everConnected) {
      this.options.logger.info('notifications/tasks from other gateway instances resumed (PostgreSQL LISTEN)', { channel: this.channel });
      this.options.onResync();
    } else this.options.logger.debug('listening for task changes of other gateway instances', { channel: this.channel });
    this.everConnected = true;
  }

  /** The connection failed or ended: dropped, and opened again after the current backoff. */
  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.ping);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.options.logger.warn('the PostgreSQL connection that hears other gateway instances\u2019 task changes dropped; reconnecting', {
      err,
      retryMs: this.delay,
    });
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.retry) return;
    // +-20 % so that instances that lost PostgreSQL together do not all come back at once
    const wait = Math.round(this.delay * (0.8 + Math.random() * 0.4));
    this.delay = Math.min(this.delay * 2, this.options.maxBackoffMs ?? 30_000);
    this.retry = setTimeout(() => void this.connect(), wait);
    this.retry.unref();
  }

  /** Tells the other instances that these tasks changed (one notification each, its id only; they read the row). */
  publish(taskIds: readonly string[]): Promise<void> {
    if (this.closed || taskIds.length === 0) return Promise.resolve();
    const sql = 'SELECT pg_notify(?, t) FROM unnest(?::text[]) AS t';
    const params = [this.channel, taskIds];
    // On the listening connection, so its own copies are recognised; through the pool while it is down.
    const viaPool = () => this.options.db.run(sql, params);
    const client = this.client;
    const sent = client
      ? client.query('SELECT pg_notify($1, t) FROM unnest($2::text[]) AS t', params).then(() => undefined, viaPool)
      : viaPool();
    return sent.catch((err: unknown) => {
      this.options.logger.warn('could not tell other gateway instances that tasks changed (pg_notify)', {
        err,
        taskIds: taskIds.slice(0, 10),
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.ping);
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }
}
