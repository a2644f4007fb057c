import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { AppError, decodeCursor, encodeCursor, toAppError, type Logger } from '@mcp-fleet/kit';
import { type SqliteDb } from '@mcp-fleet/kit/sqlite';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface JobOutput {
  path: string;
  bytes: number;
  analysis?: unknown;
}

export interface JobRecord {
  id: string;
  operation: string;
  source: string;
  state: JobState;
  percent: number;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  outputs: JobOutput[];
  error?: { code: string; message: string };
}

interface Row {
  id: string;
  seq: number;
  operation: string;
  source: string;
  state: JobState;
  percent: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  outputs: string | null;
  error: string | null;
  partial: string | null;
}

const fromRow = (r: Row): JobRecord => ({
  id: r.id,
  operation: r.operation,
  source: r.source,
  state: r.state,
  percent: Math.round(r.percent * 10) / 10,
  createdAt: r.created_at,
  ...(r.started_at ? { startedAt: r.started_at } : {}),
  ...(r.finished_at ? { finishedAt: r.finished_at } : {}),
  outputs: r.outputs ? (JSON.parse(r.outputs) as JobOutput[]) : [],
  ...(r.error ? { error: JSON.parse(r.error) as { code: string; message: string } } : {}),
});

/** Job records in SQLite, so they outlive the process; the work itself does not. */
export class JobStore {
  private constructor(private readonly db: SqliteDb) {}

  /** Opens the table; jobs left queued or running by a previous process become interrupted and their partial files go. */
  static async open(db: SqliteDb, logger: Logger): Promise<JobStore> {
    await db.exec(`CREATE TABLE IF NOT EXISTS media_jobs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      operation TEXT NOT NULL,
      source TEXT NOT NULL,
      state TEXT NOT NULL,
      percent REAL NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT,
      outputs TEXT,
      error TEXT,
      partial TEXT
    )`);
    const left = await db.all<Row>(`SELECT * FROM media_jobs WHERE state IN ('queued','running')`);
    for (const row of left) {
      if (row.partial) await fs.rm(row.partial, { force: true });
      await db.run(`UPDATE media_jobs SET state='interrupted', finished_at=?, partial=NULL, error=? WHERE id=?`, [
        new Date().toISOString(),
        JSON.stringify({ code: 'INTERRUPTED', message: `The service stopped while the job was ${row.state}; submit it again.` }),
        row.id,
      ]);
    }
    if (left.length) logger.warn('jobs interrupted by a restart', { count: left.length });
    return new JobStore(db);
  }

  async create(operation: string, source: string, partial: string | undefined): Promise<JobRecord> {
    const id = randomUUID();
    await this.db.run(`INSERT INTO media_jobs (id, operation, source, state, percent, created_at, partial) VALUES (?,?,?,?,0,?,?)`, [
      id,
      operation,
      source.slice(0, 2000),
      'queued',
      new Date().toISOString(),
      partial ?? null,
    ]);
    return (await this.get(id))!;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const row = await this.db.get<Row>(`SELECT * FROM media_jobs WHERE id=?`, [id]);
    return row ? fromRow(row) : undefined;
  }

  async started(id: string): Promise<void> {
    await this.db.run(`UPDATE media_jobs SET state='running', started_at=? WHERE id=?`, [new Date().toISOString(), id]);
  }

  async progress(id: string, percent: number): Promise<void> {
    await this.db.run(`UPDATE media_jobs SET percent=? WHERE id=? AND state='running'`, [percent, id]);
  }

  async finish(id: string, state: JobState, result: { outputs?: JobOutput[]; error?: { code: string; message: string } }): Promise<void> {
    await this.db.run(`UPDATE media_jobs SET state=?, finished_at=?, partial=NULL, percent=?, outputs=?, error=? WHERE id=?`, [
      state,
      new Date().toISOString(),
      state === 'succeeded' ? 100 : ((await this.get(id))?.percent ?? 0),
      result.outputs ? JSON.stringify(result.outputs) : null,
      result.error ? JSON.stringify(result.error) : null,
      id,
    ]);
  }

  /** Newest first; the cursor is the last row's sequence number. */
  async list(options: { state?: JobState; limit: number; cursor?: string }): Promise<{ items: JobRecord[]; nextCursor?: string }> {
    const before = options.cursor ? decodeCursor(options.cursor) : Number.MAX_SAFE_INTEGER;
    const rows = await this.db.all<Row>(
      `SELECT * FROM media_jobs WHERE seq < ? ${options.state ? 'AND state = ?' : ''} ORDER BY seq DESC LIMIT ?`,
      options.state ? [before, options.state, options.limit + 1] : [before, options.limit + 1],
    );
    const page = rows.slice(0, options.limit);
    return {
      items: page.map(fromRow),
      ...(rows.length > options.limit ? { nextCursor: encodeCursor(page[page.length - 1].seq) } : {}),
    };
  }
}

export interface JobWork {
  /** Does the work; throws on failure. The signal aborts on cancel and on the job's time limit. */
  run(signal: AbortSignal, onPercent: (p: number) => void): Promise<JobOutput[]>;
  /** Always called once the job ends, whatever the outcome (removes scratch input, partial output). */
  cleanup(): Promise<void>;
}

interface Pending {
  id: string;
  work: JobWork;
}

const CANCELLED = 'cancelled by media_query';

/** A bounded queue: at most `concurrency` jobs run, at most `queueMax` wait, each under `timeoutMs`. */
export class JobRunner {
  private readonly queue: Pending[] = [];
  private readonly running = new Map<string, AbortController>();
  private readonly settled = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    readonly store: JobStore,
    private readonly options: { concurrency: number; queueMax: number; timeoutMs: number; logger: Logger },
  ) {}

  get active(): number {
    return this.running.size;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Refuses before anything is written when the queue is full. */
  assertRoom(): void {
    if (this.closed) throw new AppError('UPSTREAM_UNAVAILABLE', 'media-mcp is shutting down; submit the job again later.');
    if (this.queue.length >= this.options.queueMax) {
      throw new AppError(
        'RATE_LIMITED',
        `The job queue is full (${this.options.queueMax} waiting, MEDIA_JOB_QUEUE_MAX); try again later.`,
        {
          retryAfter: 10,
        },
      );
    }
  }

  async submit(operation: string, source: string, partial: string | undefined, work: JobWork): Promise<JobRecord> {
    this.assertRoom();
    const record = await this.store.create(operation, source, partial);
    this.queue.push({ id: record.id, work });
    this.pump();
    return record;
  }

  /** Resolves once the job has ended (for tests and shutdown). */
  async settledJob(id: string): Promise<void> {
    await this.settled.get(id);
  }

  async cancel(id: string): Promise<JobRecord> {
    const record = await this.store.get(id);
    if (!record) throw new AppError('NOT_FOUND', `No job ${id}; media_query with action "list" shows the jobs.`);
    const queued = this.queue.findIndex((p) => p.id === id);
    if (queued >= 0) {
      const [p] = this.queue.splice(queued, 1);
      await p.work.cleanup();
      await this.store.finish(id, 'cancelled', { error: { code: 'CANCELLED', message: 'Cancelled before it started.' } });
    } else if (this.running.has(id)) {
      this.running.get(id)!.abort(new AppError('CONFLICT', CANCELLED));
      await this.settled.get(id);
    } else {
      throw new AppError('CONFLICT', `Job ${id} has already ended (${record.state}); nothing to cancel.`);
    }
    return (await this.store.get(id))!;
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.options.concurrency && this.queue.length) {
      const next = this.queue.shift()!;
      const controller = new AbortController();
      this.running.set(next.id, controller);
      this.settled.set(
        next.id,
        this.execute(next, controller).finally(() => {
          this.running.delete(next.id);
          this.settled.delete(next.id);
          this.pump();
        }),
      );
    }
  }

  private async execute({ id, work }: Pending, controller: AbortController): Promise<void> {
    const timer = setTimeout(
      () =>
        controller.abort(
          new AppError('TIMEOUT', `The job ran longer than ${this.options.timeoutMs} ms (MEDIA_JOB_TIMEOUT_MS); it was stopped.`),
        ),
      this.options.timeoutMs,
    );
    let lastWrite = 0;
    let writes = Promise.resolve();
    const onPercent = (p: number) => {
      const now = Date.now();
      if (now - lastWrite < 500 && p < 100) return;
      lastWrite = now;
      writes = writes.then(() => this.store.progress(id, p)).catch(() => undefined);
    };
    try {
      await this.store.started(id);
      const outputs = await work.run(controller.signal, onPercent);
      await writes;
      await this.store.finish(id, 'succeeded', { outputs });
    } catch (err) {
      await writes;
      const reason: unknown = controller.signal.reason;
      const cancelled = controller.signal.aborted && reason instanceof AppError && reason.message === CANCELLED;
      const e = toAppError(controller.signal.aborted && reason ? reason : err);
      if (e.code === 'INTERNAL') this.options.logger.error('job failed', { id, error: (err as Error)?.message });
      const state: JobState = cancelled ? 'cancelled' : this.closed && controller.signal.aborted ? 'interrupted' : 'failed';
      await this.store.finish(id, state, {
        error: cancelled
          ? { code: 'CANCELLED', message: 'Cancelled while running; the partial output was removed.' }
          : state === 'interrupted'
            ? { code: 'INTERRUPTED', message: 'The service stopped while the job ran; submit it again.' }
            : { code: e.code, message: e.message },
      });
    } finally {
      clearTimeout(timer);
      await work.cleanup().catch(() => undefined);
    }
  }

  /** Stops taking jobs, aborts the running ones; their records say interrupted. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) {
      await p.work.cleanup().catch(() => undefined);
      await this.store.finish(p.id, 'interrupted', {
        error: { code: 'INTERRUPTED', message: 'The service stopped before the job started.' },
      });
    }
    for (const c of this.running.values())
      c.abort(new AppError('UPSTREAM_UNAVAILABLE', 'The service stopped while the job ran; submit it again.'));
    await Promise.all([...this.settled.values()]);
  }
}
