import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import path from 'node:path';
import type { Config } from './config';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker';

export interface BufferedMessage {
  seq: number;
  topic: string;
  payload: string;
  encoding: 'utf8' | 'base64';
  bytes: number;
  truncated: boolean;
  qos: 0 | 1 | 2;
  retain: boolean;
  receivedAt: string;
  contentType?: string;
  userProperties?: Record<string, string | string[]>;
}

export interface Subscription {
  filter: string;
  qos: 0 | 1 | 2;
}

/** MQTT topic-filter matching (`+` one level, `#` the rest; `$` topics only match filters naming them). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (topic.startsWith('$') && !filter.startsWith('$')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * One persistent MQTT session: a stable client id, clean=false (MQTT 5: session expiry), the
 * subscriptions in SQLite re-established whenever the broker has no session for us, and a bounded
 * buffer of received messages.
 */
export class MqttHub {
  private client?: MqttClient;
  private broker?: EmbeddedBroker;
  private db?: SqliteDb;
  private seq = 0;
  private readonly byTopic = new Map<string, BufferedMessage[]>();
  private totalCount = 0;
  private totalBytes = 0;
  readonly stats = { received: 0, published: 0, evicted: 0, truncated: 0, reconnects: 0 };
  lastError?: string;
  brokerUrl = '';
  readonly ready: Promise<void>;
  private closed = false;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    this.ready = this.start();
    this.ready.catch((err: Error) => {
      this.lastError = err.message;
      logger.error('mqtt-mcp could not start its MQTT client', { error: err.message });
    });
  }

  get protocolVersion(): 4 | 5 {
    return this.config.MQTT_PROTOCOL_VERSION ?? (this.config.MQTT_URL ? 5 : 4);
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  /**
   * Connected, and every stored subscription in force on this connection: the broker kept our
   * session, or the subscriptions were made again and acknowledged. Messages published before
   * this (on a broker that lost the session) were never for us.
   */
  get subscribed(): boolean {
    return this.connected && this.subscribedConnection === this.connections && this.pending.size === 0;
  }
  /** Whether the broker kept our session at the last connect. */
  sessionPresent?: boolean;
  private connections = 0;
  private subscribedConnection = -1;
  /** Filters stored while the broker could not be asked (or did not answer): made on the next connect even when the session was kept. */
  private readonly pending = new Set<string>();
  /** Filters removed while the broker could not be told: unsubscribed on the next connect that kept the session. */
  private readonly dropped = new Set<string>();

  get embeddedPort(): number | undefined {
    return this.broker?.port;
  }

  private async start(): Promise<void> {
    const c = this.config;
    this.db = await SqliteDb.open(path.join(c.DATA_DIR, 'mqtt-mcp', 'subscriptions.sqlite'));
    await this.db.exec(
      'CREATE TABLE IF NOT EXISTS subscriptions (filter TEXT PRIMARY KEY, qos INTEGER NOT NULL, created_at TEXT NOT NULL)',
    );
    let url = c.MQTT_URL;
    if (!url) {
      this.broker = await startEmbeddedBroker(c.MQTT_EMBEDDED_HOST, c.MQTT_EMBEDDED_PORT, this.logger);
      url = this.broker.url;
    }
    const u = new URL(url);
    this.brokerUrl = `${u.protocol}//${u.host}`; // no credentials, ever
    if (this.closed) return;
    const v5 = this.protocolVersion === 5;
    const options: IClientOptions = {
      clientId: c.MQTT_CLIENT_ID,
      clean: false,
      protocolVersion: this.protocolVersion,
      reconnectPeriod: c.MQTT_RECONNECT_MS,
      connectTimeout: c.MQTT_CONNECT_TIMEOUT_MS,
      resubscribe: false,
      queueQoSZero: false,
      username: c.MQTT_USERNAME ?? (u.username ? decodeURIComponent(u.username) : undefined),
      password: c.MQTT_PASSWORD ?? (u.password ? decodeURIComponent(u.password) : undefined),
      ...(v5 ? { properties: { sessionExpiryInterval: c.MQTT_SESSION_EXPIRY_S } } : {}),
    };
    u.username = '';
    u.password = '';
    const client = mqtt.connect(u.toString(), options);
    this.client = client;
    client.on('connect', (ack) => {
      const connection = ++this.connections;
      this.sessionPresent = ack.sessionPresent;
      this.logger.info('connected to MQTT broker', { broker: this.brokerUrl, sessionPresent: ack.sessionPresent });
      void this.resubscribe(ack.sessionPresent).then((ok) => {
        if (ok) this.subscribedConnection = connection;
      });
    });
    client.on('reconnect', () => {
      this.stats.reconnects++;
    });
    client.on('error', (err) => {
      this.lastError = err.message;
      this.logger.warn('MQTT client error', { broker: this.brokerUrl, error: err.message });
    });
    client.on('close', () => {
      if (!this.closed) this.lastError ??= 'connection closed';
    });
    client.on('message', (topic, payload, packet) => this.receive(topic, payload, packet));
  }

  /**
   * After a connect without a kept session every stored subscription is made again; with a kept
   * session, those stored while the broker could not be asked. True once they are in force.
   */
  private async resubscribe(sessionPresent: boolean): Promise<boolean> {
    const subs = (await this.subscriptions()).filter((s) => !sessionPresent || this.pending.has(s.filter));
    const client = this.client;
    if (!client) return false;
    if (!sessionPresent) this.dropped.clear();
    else if (this.dropped.size) {
      const filters = [...this.dropped];
      const ok = await new Promise<boolean>((resolve) =>
        client.unsubscribe(filters, (err) => {
          if (err) this.logger.warn('unsubscribe after reconnect failed', { error: err.message });
          else for (const f of filters) this.dropped.delete(f);
          resolve(!err);
        }),
      );
      if (!ok) return false;
    }
    if (subs.length === 0) return true;
    return new Promise<boolean>((resolve) =>
      client.subscribe(Object.fromEntries(subs.map((s) => [s.filter, { qos: s.qos }])), (err) => {
        if (err) this.logger.warn('resubscribe failed', { error: err.message });
        else for (const s of subs) this.pending.delete(s.filter);
        resolve(!err);
      }),
    );
  }

  private receive(topic: string, payload: Buffer, packet: mqtt.IPublishPacket): void {
    this.stats.received++;
    const cap = this.config.MQTT_MAX_PAYLOAD_BYTES;
    const truncated = payload.length > cap;
    if (truncated) this.stats.truncated++;
    const kept = truncated ? payload.subarray(0, cap) : payload;
    let text: string | undefined;
    try {
      text = decoder.decode(kept);
    } catch {
      text = undefined;
    }
    const props = packet.properties;
    const msg: BufferedMessage = {
      seq: ++this.seq,
      topic,
      payload: text ?? kept.toString('base64'),
      encoding: text === undefined ? 'base64' : 'utf8',
      bytes: payload.length,
      truncated,
      qos: packet.qos,
      retain: packet.retain,
      receivedAt: new Date().toISOString(),
      ...(props?.contentType ? { contentType: props.contentType } : {}),
      ...(props?.userProperties ? { userProperties: props.userProperties } : {}),
    };
    this.store(msg, kept.length);
  }

  private store(msg: BufferedMessage, size: number): void {
    const c = this.config;
    const list = this.byTopic.get(msg.topic) ?? [];
    this.byTopic.set(msg.topic, list);
    list.push(msg);
    (msg as BufferedMessage & { size: number }).size = size;
    this.totalCount++;
    this.totalBytes += size;
    const sizeOf = (m: BufferedMessage) => (m as BufferedMessage & { size: number }).size;
    let topicBytes = list.reduce((n, m) => n + sizeOf(m), 0);
    while (list.length > 1 && (list.length > c.MQTT_BUFFER_PER_TOPIC || topicBytes > c.MQTT_BUFFER_PER_TOPIC_BYTES)) {
      topicBytes -= sizeOf(list[0]);
      this.evict(list);
    }
    while (this.totalCount > c.MQTT_BUFFER_TOTAL || this.totalBytes > c.MQTT_BUFFER_TOTAL_BYTES) {
      let oldest: BufferedMessage[] | undefined;
      for (const l of this.byTopic.values()) if (l.length && (!oldest || l[0].seq < oldest[0].seq)) oldest = l;
      if (!oldest || this.totalCount <= 1) break;
      this.evict(oldest);
    }
  }

  private evict(list: BufferedMessage[]): void {
    const m = list.shift()!;
    this.totalCount--;
    this.totalBytes -= (m as BufferedMessage & { size: number }).size;
    this.stats.evicted++;
    if (list.length === 0) this.byTopic.delete(m.topic);
  }

  buffered(): { messages: number; bytes: number; topics: number } {
    return { messages: this.totalCount, bytes: this.totalBytes, topics: this.byTopic.size };
  }

  /** Newest first; `before` is the seq of the last message of the previous page. */
  list(filter: string, since: number | undefined, before: number | undefined, limit: number): { items: BufferedMessage[]; more: boolean } {
    const all: BufferedMessage[] = [];
    for (const [topic, l] of this.byTopic) {
      if (!topicMatches(filter, topic)) continue;
      for (const m of l)
        if ((before === undefined || m.seq < before) && (since === undefined || Date.parse(m.receivedAt) >= since)) all.push(m);
    }
    all.sort((a, b) => b.seq - a.seq);
    const items = all.slice(0, limit).map((m) => {
      const { size: _size, ...rest } = m as BufferedMessage & { size: number };
      return rest;
    });
    return { items, more: all.length > limit };
  }

  private async live(): Promise<{ client: MqttClient; db: SqliteDb }> {
    try {
      await this.ready;
    } catch (err) {
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        `The MQTT client could not start (${(err as Error).message}); check MQTT_URL / MQTT_EMBEDDED_PORT.`,
      );
    }
    return { client: this.client!, db: this.db! };
  }

  private async connectedClient(): Promise<MqttClient> {
    const { client } = await this.live();
    if (!client.connected)
      throw new AppError('UPSTREAM_UNAVAILABLE', `The MQTT broker ${this.brokerUrl} is not reachable right now; retry once it is back.`, {
        details: { lastError: this.lastError },
        retryAfter: Math.ceil(this.config.MQTT_RECONNECT_MS / 1000),
      });
    return client;
  }

  async publish(
    topic: string,
    payload: Buffer,
    opts: { qos: 0 | 1 | 2; retain: boolean; properties?: mqtt.IClientPublishOptions['properties'] },
  ): Promise<void> {
    const client = await this.connectedClient();
    const properties = this.protocolVersion === 5 ? opts.properties : undefined;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new AppError(
              'UPSTREAM_UNAVAILABLE',
              `The MQTT broker did not acknowledge within ${this.config.MQTT_CONNECT_TIMEOUT_MS} ms; retry.`,
            ),
          ),
        this.config.MQTT_CONNECT_TIMEOUT_MS,
      );
      client.publish(topic, payload, { qos: opts.qos, retain: opts.retain, ...(properties ? { properties } : {}) }, (err) => {
        clearTimeout(timer);
        if (err) reject(new AppError('UPSTREAM_ERROR', `The MQTT broker refused the message: ${err.message}.`));
        else resolve();
      });
    });
    this.stats.published++;
  }

  async subscribe(filter: string, qos: 0 | 1 | 2): Promise<{ established: boolean; grantedQos?: number }> {
    const { client, db } = await this.live();
    await db.run(
      'INSERT INTO subscriptions (filter, qos, created_at) VALUES (?, ?, ?) ON CONFLICT(filter) DO UPDATE SET qos = excluded.qos',
      [filter, qos, new Date().toISOString()],
    );
    this.pending.add(filter);
    this.dropped.delete(filter);
    if (!client.connected) return { established: false };
    const granted = await new Promise<number | undefined>((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), this.config.MQTT_CONNECT_TIMEOUT_MS);
      client.subscribe(filter, { qos }, (err, grants) => {
        clearTimeout(timer);
        if (err) reject(new AppError('UPSTREAM_ERROR', `The MQTT broker refused the subscription: ${err.message}.`));
        else resolve(grants?.[0]?.qos);
      });
    });
    if (granted !== undefined) this.pending.delete(filter);
    if (granted !== undefined && granted >= 128) {
      await db.run('DELETE FROM subscriptions WHERE filter = ?', [filter]);
      throw new AppError('FORBIDDEN', `The MQTT broker refused a subscription to ${filter} (reason ${granted}).`);
    }
    return { established: granted !== undefined, ...(granted !== undefined ? { grantedQos: granted } : {}) };
  }

  async unsubscribe(filter: string): Promise<{ removed: boolean }> {
    const { client, db } = await this.live();
    const { changes } = await db.run('DELETE FROM subscriptions WHERE filter = ?', [filter]);
    if (changes === 0) throw new AppError('NOT_FOUND', `There is no subscription ${filter}; get_mqtt_status lists them.`);
    this.pending.delete(filter);
    if (client.connected) await new Promise<void>((resolve) => client.unsubscribe(filter, () => resolve()));
    else this.dropped.add(filter);
    return { removed: true };
  }

  async subscriptions(): Promise<Subscription[]> {
    if (!this.db) return [];
    return this.db.all<Subscription>('SELECT filter, qos FROM subscriptions ORDER BY filter');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.ready.catch(() => undefined);
    if (this.client) await new Promise<void>((resolve) => this.client!.end(true, {}, () => resolve()));
    await this.broker?.close();
    await this.db?.close();
  }
}
