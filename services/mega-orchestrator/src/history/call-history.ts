import fs from 'node:fs/promises';
import { decodeCursor, encodeCursor, isSecretName, redact, type Logger } from '@mcp-fleet/kit';
import { openPostgresHistory, openSqliteHistory, type HistoryDb, type Statement } from './history-db';
import { historyKey, type Owner } from '../auth/ownership';

export interface CallRecord {
  sessionId: string;
  /** The caller's owner key (ownership.ts): the session's history is its own; null or absent without authorization. */
  owner?: Owner;
  contextId?: string;
  tool: string;
  service?: string;
  /** How the call came in (core/types.ts's Transport: native, jsonrpc, service, proxy): stored as given. */
  transport: string;
  /** Its routing mode (core/types.ts's RoutingMode: auto, primary): stored as given. */
  mode: string;
  success: boolean;
  code?: string;
  durationMs: number;
  at: number;
  /** Redacted and cut to ARGS_MAX characters when written, not on the call's path. */
  args: unknown;
  /** The arguments' JSON text as sent downstream (JSON.stringify(args)), when the caller has it: stored as it is when nothing in it needs redacting. */
  argsText?: string;
  /** What the call answered (its envelope): redacted and cut to RESULT_MAX characters when written, as the arguments are. */
  result?: unknown;
  /**
   * The JSON text of the envelope's `result` as the service wrote it (DownstreamAnswer.resultText), when
   * the answer carried it: the envelope is then stored from this text without serializing the result
   * again, when nothing in it needs redacting or a note for media (else as `result`).
   */
  resultText?: string;
}

export interface CallHistoryOptions {
  file: string;
  /** PostgreSQL instead of the SQLite file, shared by several gateway instances. */
  databaseUrl?: string;
  maxCallsPerSession: number;
  flushMs: number;
  retentionHours: number;
  logger: Logger;
}

export const ARGS_MAX = 1024;
/** The most of a call's result (its envelope, as JSON) kept in the history. */
export const RESULT_MAX = 16 * 1024;
/** Base64 strings at least this long (an image, audio) are kept as a note of their size, not their data. */
const MEDIA_MIN = 1024;
const BASE64 = /^[A-Za-z0-9+/\r\n]+={0,2}$/;
const MEDIA_KEYS = new Set(['data', 'blob', 'base64']);
const BATCH = 200;
/**
 * Queued records that start a write at once rather than at SESSION_FLUSH_MS: well above BATCH, so
 * that a busy session's calls meet in one write, where those its trim would delete in the same
 * transaction are never inserted (writeQueued).
 */
const FLUSH_AT = 2000;
/** Rows per multi-row INSERT (12 parameters each): a batch in one statement (2,400 parameters; SQLite takes 32,766, PostgreSQL 65,535). */
const INSERT_ROWS = BATCH;
const QUEUE_MAX = 10_000;
/** Characters of argument and result text the queue holds before the oldest records are dropped. */
const QUEUE_TEXT_MAX = 32 * 1024 * 1024;
/** At most one log line about dropped records per this many ms. */
const DROP_LOG_MS = 60_000;
/** Nesting redact() keeps: an object or array deeper than this many brackets becomes its note. */
const REDACT_BRACKETS = 9;
/** A media key with a string value, in JSON text (withoutMedia may rewrite it). */
const MEDIA_KEY_TEXT = /"(?:data|blob|base64)"\s*:\s*"/;

/** Arguments as stored: secret-looking keys redacted, cut to ARGS_MAX characters. */
export function summarizeArgs(args: unknown, max = ARGS_MAX, media = false): { text: string; truncated: boolean; length: number } {
  let text: string;
  try {
    text = JSON.stringify(redact(args), media ? withoutMedia : undefined) ?? 'null';
  } catch {
    text = '"(unserializable)"';
  }
  if (text.length <= max) return { text, truncated: false, length: text.length };
  return { text: text.slice(0, max), truncated: true, length: text.length };
}

/** Base64 media in a result (an image's or audio's data, a resource's blob) as a note of its size. */
function withoutMedia(key: string, value: unknown): unknown {
  return MEDIA_KEYS.has(key) && typeof value === 'string' && value.length >= MEDIA_MIN && BASE64.test(value)
    ? `[${value.length} characters of base64 data, not kept]`
    : value;
}

/** A call's arguments or result as its column holds it: the JSON, or {truncated, excerpt, length} when it was cut. */
function stored(value: unknown, max: number, media = false): string {
  const { text, truncated, length } = summarizeArgs(value, max, media);
  return cut(text, truncated, length);
}

function cut(text: string, truncated: boolean, length: number): string {
  return truncated ? JSON.stringify({ truncated: true, excerpt: text, length }) : text;
}

/**
 * A JSON text (of a value parsed from JSON) as its column holds it, taken as it is when summarizeArgs
 * would change nothing in it: no secret-looking name anywhere in it (isSecretName over the whole text,
 * so also in values, and no \u escape that could spell one), no media key with a string value, nothing
 * nested deeper than redact() keeps. Otherwise undefined, and the value takes the full path.
 */
export function storedText(text: string, max: number, media = false): string | undefined {
  if (text.includes('\\u') || isSecretName(text) || (media && MEDIA_KEY_TEXT.test(text)) || !nestedAtMost(text, REDACT_BRACKETS))
    return undefined;
  return cut(text.length <= max ? text : text.slice(0, max), text.length > max, text.length);
}

/** True when no object or array in the JSON text is nested deeper than `max` brackets (strings are skipped whole, with indexOf). */
function nestedAtMost(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // on to the string's closing quote: the next quote after an even run of backslashes
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return false;
        let b = i - 1;
        while (text.charCodeAt(b) === 92) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > max) return false;
    } else if (c === 125 || c === 93) depth--;
  }
  return true;
}

/**
 * A record as the queue holds it until the batch write: with the texts the call path had, not the
 * parsed values they came from (an answer's object graph, kept alive for SESSION_FLUSH_MS, is what
 * the young generation's collections would copy and promote). With resultText, `result` is the
 * envelope without its `result`; with argsText, `args` is not kept.
 */
type Queued = Omit<CallRecord, 'args' | 'result'> & { args?: unknown; result?: unknown };

function queued(r: CallRecord): Queued {
  if (r.argsText === undefined && r.resultText === undefined) return r;
  const out: Queued = { ...r };
  if (r.argsText !== undefined) out.args = undefined;
  if (r.resultText !== undefined) {
    const envelope = r.result;
    if (
      envelope !== null &&
      typeof envelope === 'object' &&
      !Array.isArray(envelope) &&
      (envelope as { result?: unknown }).result !== undefined
    ) {
      const { result: _kept, ...rest } = envelope as Record<string, unknown>;
      out.result = rest;
    } else out.resultText = undefined; // no result to stand for: the envelope is kept as it is
  }
  return out;
}

/** The envelope's JSON text with the result's own text as its `result` (last, as the service wrote it). */
function envelopeText(rest: unknown, resultText: string): string {
  const head = JSON.stringify(rest);
  return head === '{}' ? `{"result":${resultText}}` : `${head.slice(0, -1)},"result":${resultText}}`;
}

/** A text kept as it is when nothing in it needs rewriting, else parsed back and redacted, media noted and cut as a value is. */
function storedFromText(text: string, max: number, media = false): string {
  const kept = storedText(text, max, media);
  if (kept !== undefined) return kept;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = '(unserializable)';
  }
  return stored(value, max, media);
}

/** What the call's columns hold. */
function columns(r: Queued): { args: string; result: string | null } {
  const args = r.argsText !== undefined ? storedFromText(r.argsText, ARGS_MAX) : stored(r.args, ARGS_MAX);
  if (r.result === undefined) return { args, result: null };
  return {
    args,
    result:
      r.resultText !== undefined
        ? storedFromText(envelopeText(r.result, r.resultText), RESULT_MAX, true)
        : stored(r.result, RESULT_MAX, true),
  };
}

/** Characters of text a record holds in the queue. */
const heldText = (r: Queued) => (r.argsText?.length ?? 0) + (r.resultText?.length ?? 0);

/** A row of the sessions table (one per history key: its transport, first and last call, counts). */
export interface SessionRow {
  session_id: string;
  transport: string;
  created_at: number;
  last_seen: number;
  calls: number;
  errors: number;
}

interface CallRow {
  id: number;
  context_id: string | null;
  tool: string;
  service: string | null;
  transport: string;
  mode: string;
  success: number;
  code: string | null;
  duration_ms: number;
  at: number;
  args: string | null;
  /** Absent or null: recorded before results were kept. */
  result?: string | null;
}

/**
 * Session and context records in SQLite. Calls are queued in memory and written in batches off the
 * request path; each session keeps its newest maxCallsPerSession calls.
 */
export class CallHistory {
  private db?: HistoryDb;
  private readonly ready: Promise<void>;
  private queue: Queued[] = [];
  private queueText = 0;
  private dropLoggedAt = 0;
  private droppedSinceLog = 0;
  private timer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  failure?: string;
  written = 0;
  dropped = 0;

  constructor(private readonly options: CallHistoryOptions) {
    this.ready = this.open();
  }

  get file(): string {
    return this.options.file;
  }

  /** SESSION_DATABASE_URL when the store is PostgreSQL (the task manager listens there for other instances' task changes). */
  get databaseUrl(): string | undefined {
    return this.options.databaseUrl;
  }

  private async open(): Promise<void> {
    try {
      this.db = this.options.databaseUrl ? await openPostgresHistory(this.options.databaseUrl) : await openSqliteHistory(this.options.file);
      await this.prune();
      this.pruneTimer = setInterval(() => void this.prune(), 3_600_000);
      this.pruneTimer.unref();
    } catch (err) {
      const where = this.options.databaseUrl ? 'in PostgreSQL (SESSION_DATABASE_URL)' : `at ${this.options.file}`;
      this.failure = `the session store ${where} could not be opened: ${(err as Error).message}`;
      this.options.logger.error(this.failure, { err });
    }
  }

  /** The open database (undefined when it could not be opened), for the MCP task store beside the history. */
  async database(): Promise<HistoryDb | undefined> {
    await this.ready;
    return this.db;
  }

  /** Waits until the database is open (or failed to open). */
  async whenReady(): Promise<boolean> {
    await this.ready;
    return this.db !== undefined;
  }

  /**
   * Queues a call for the next batch write; nothing is redacted or serialized here. Past QUEUE_MAX
   * records or QUEUE_TEXT_MAX characters of text held, the oldest records are dropped (counted in
   * `dropped`, the history queue's metric, and logged at most once a minute).
   */
  enqueue(record: CallRecord): void {
    if (this.closed || this.failure) return;
    const q = queued(record);
    this.queue.push(q);
    this.queueText += heldText(q);
    let dropped = 0;
    while (this.queue.length > 1 && (this.queue.length > QUEUE_MAX || this.queueText > QUEUE_TEXT_MAX)) {
      this.queueText -= heldText(this.queue.shift()!);
      dropped++;
    }
    if (dropped > 0) this.droppedRecords(dropped, 'the queue was full');
    if (this.queue.length >= FLUSH_AT) this.schedule(0);
    else this.schedule(this.options.flushMs);
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Records held in memory before the oldest are dropped. */
  get capacity(): number {
    return QUEUE_MAX;
  }

  private schedule(delay: number): void {
    if (this.timer && delay > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delay);
    this.timer.unref();
  }

  /** Writes everything queued so far. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.writeQueued());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /**
   * Writes the records queued when it starts. Those that come in meanwhile wait for their own timer
   * (enqueue set it, at once past FLUSH_AT): a busy gateway writes every flushMs rather than an
   * unbroken string of small batches, each with its own transaction, statements and WAL commit (at
   * one connection, 29 batches a second of about 27 calls each before; 0.1 ms of CPU a call). A
   * session's calls beyond its newest maxCallsPerSession among them are counted in its totals and
   * not inserted: the same transaction's trim would delete them (at 4,000 calls a second in one
   * session, four of five).
   */
  private async writeQueued(): Promise<void> {
    if (!(await this.whenReady())) return;
    const db = this.db!;
    let left = this.queue.length;
    const superseded = this.superseded(left);
    while (left > 0 && this.queue.length > 0) {
      // at most BATCH rows inserted a transaction, with the superseded calls before them
      const end = Math.min(left, this.queue.length);
      let n = 0;
      for (let rows = 0; n < end; n++) {
        if (superseded.has(this.queue[n])) continue;
        if (rows === BATCH) break;
        rows++;
      }
      const batch = this.queue.splice(0, n);
      left -= batch.length;
      for (const r of batch) this.queueText -= heldText(r);
      try {
        await db.batch(this.statementsFor(batch, superseded));
        this.written += batch.length;
      } catch (err) {
        this.dropped += batch.length;
        this.options.logger.error('could not write session records; they are dropped', { err, count: batch.length });
      }
    }
  }

  /** Of the first `count` queued records, those older than their session's newest maxCallsPerSession among them. */
  private superseded(count: number): Set<Queued> {
    const out = new Set<Queued>();
    const max = this.options.maxCallsPerSession;
    if (count <= max) return out;
    const seen = new Map<string, number>();
    for (let i = Math.min(count, this.queue.length) - 1; i >= 0; i--) {
      const r = this.queue[i];
      const key = historyKey(r.sessionId, r.owner ?? null);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (n > max) out.add(r);
    }
    return out;
  }

  private droppedRecords(count: number, why: string): void {
    this.dropped += count;
    this.droppedSinceLog += count;
    const now = Date.now();
    if (now - this.dropLoggedAt < DROP_LOG_MS) return;
    this.options.logger.warn(`session records dropped: ${why} (the store is not keeping up)`, {
      count: this.droppedSinceLog,
      dropped: this.dropped,
      queued: this.queue.length,
    });
    this.dropLoggedAt = now;
    this.droppedSinceLog = 0;
  }

  /**
   * A batch as a few statements: the calls in multi-row INSERTs (but the superseded), one upsert per
   * session (its counts summed over them all), and one trim per session to its newest
   * maxCallsPerSession calls.
   */
  private statementsFor(batch: readonly Queued[], superseded: ReadonlySet<Queued>): Statement[] {
    const out: Statement[] = [];
    const keys = batch.map((r) => historyKey(r.sessionId, r.owner ?? null));
    const inserted: Queued[] = [];
    const insertedKeys: string[] = [];
    batch.forEach((r, i) => {
      if (superseded.has(r)) return;
      inserted.push(r);
      insertedKeys.push(keys[i]);
    });
    for (let i = 0; i < inserted.length; i += INSERT_ROWS) {
      const rows = inserted.slice(i, i + INSERT_ROWS);
      const params: unknown[] = [];
      rows.forEach((r, j) => {
        const { args, result } = columns(r);
        params.push(
          insertedKeys[i + j],
          r.contextId ?? null,
          r.tool,
          r.service ?? null,
          r.transport,
          r.mode,
          r.success ? 1 : 0,
          r.code ?? null,
          r.durationMs,
          r.at,
          args,
          result,
        );
      });
      out.push({
        sql: `INSERT INTO calls (session_id, context_id, tool, service, transport, mode, success, code, duration_ms, at, args, result) VALUES ${rows
          .map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        params,
      });
    }
    const sessions = new Map<string, { transport: string; first: number; last: number; calls: number; errors: number }>();
    batch.forEach((r, i) => {
      const s = sessions.get(keys[i]);
      if (s) {
        s.last = r.at;
        s.calls++;
        if (!r.success) s.errors++;
      } else {
        sessions.set(keys[i], { transport: r.transport, first: r.at, last: r.at, calls: 1, errors: r.success ? 0 : 1 });
      }
    });
    for (const [id, s] of sessions) {
      out.push({
        sql: `INSERT INTO sessions (session_id, transport, created_at, last_seen, calls, errors) VALUES (?, ?, ?, ?, ?, ?)
              ON CONFLICT(session_id) DO UPDATE SET last_seen = excluded.last_seen, calls = sessions.calls + excluded.calls, errors = sessions.errors + excluded.errors`,
        params: [id, s.transport, s.first, s.last, s.calls, s.errors],
      });
      out.push({
        sql: `DELETE FROM calls WHERE session_id = ? AND id < (SELECT id FROM calls WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
        params: [id, id, this.options.maxCallsPerSession - 1],
      });
    }
    return out;
  }

  private async prune(): Promise<void> {
    if (!this.db) return;
    const cutoff = Date.now() - this.options.retentionHours * 3_600_000;
    try {
      await this.db.run('DELETE FROM calls WHERE at < ?', [cutoff]);
      await this.db.run('DELETE FROM sessions WHERE last_seen < ?', [cutoff]);
    } catch (err) {
      this.options.logger.warn('could not prune old sessions', { err });
    }
  }

  /**
   * One session of this owner: its contexts and its recent calls (newest first by call time, as
   * several gateways may write them; paginated). Another owner's session is undefined, as an unknown one.
   */
  async read(sessionId: string, owner: Owner, limit: number, cursor?: string): Promise<Record<string, unknown> | undefined> {
    const offset = decodeCursor(cursor);
    const key = historyKey(sessionId, owner);
    await this.flush();
    if (!this.db) return undefined;
    const session = await this.db.get<SessionRow>('SELECT * FROM sessions WHERE session_id = ?', [key]);
    if (!session) return undefined;
    const contexts = await this.db.all<{ context_id: string | null; calls: number; errors: number; first_at: number; last_at: number }>(
      `SELECT context_id, COUNT(*) AS calls, SUM(1 - success) AS errors, MIN(at) AS first_at, MAX(at) AS last_at
       FROM calls WHERE session_id = ? GROUP BY context_id ORDER BY last_at DESC LIMIT 500`,
      [key],
    );
    const rows = await this.db.all<CallRow>('SELECT * FROM calls WHERE session_id = ? ORDER BY at DESC, id DESC LIMIT ? OFFSET ?', [
      key,
      limit + 1,
      offset,
    ]);
    const more = rows.length > limit;
    const kept = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM calls WHERE session_id = ?', [key]);
    return {
      session_id: sessionId,
      transport: session.transport,
      createdAt: new Date(session.created_at).toISOString(),
      lastSeen: new Date(session.last_seen).toISOString(),
      totalCalls: session.calls,
      totalErrors: session.errors,
      keptCalls: kept?.n ?? 0,
      contexts: contexts.map((c) => ({
        context_id: c.context_id,
        calls: c.calls,
        errors: c.errors,
        firstAt: new Date(c.first_at).toISOString(),
        lastAt: new Date(c.last_at).toISOString(),
      })),
      calls: rows.slice(0, limit).map((r) => ({
        id: r.id,
        context_id: r.context_id,
        tool: r.tool,
        service: r.service,
        transport: r.transport,
        mode: r.mode,
        success: r.success === 1,
        ...(r.code ? { code: r.code } : {}),
        durationMs: r.duration_ms,
        at: new Date(r.at).toISOString(),
        arguments: parseArgs(r.args),
        // a call recorded before results were kept has none
        ...(typeof r.result === 'string' ? { result: parseArgs(r.result) } : {}),
      })),
      ...(more ? { nextCursor: encodeCursor(offset + limit) } : {}),
    };
  }

  async sizes(): Promise<{ file: string; bytes: number; walBytes: number; sessions: number; calls: number }> {
    const size = async (f: string) => (await fs.stat(f).catch(() => undefined))?.size ?? 0;
    const onDisk = this.db?.kind !== 'postgres';
    const [bytes, walBytes] = onDisk ? await Promise.all([size(this.file), size(`${this.file}-wal`)]) : [0, 0];
    let sessions = 0;
    let calls = 0;
    if (this.db) {
      sessions = (await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))?.n ?? 0;
      calls = (await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM calls'))?.n ?? 0;
    }
    return { file: this.file, bytes, walBytes, sessions, calls };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.flush().catch(() => undefined);
    this.closed = true;
    await this.db?.close().catch(() => undefined);
  }
}

function parseArgs(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
