import fs from 'node:fs';
import path from 'node:path';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { describeWithProgram, makeClip, makeTone, tempDir, testLogger } from '@mcp-fleet/testing';
import { JobStore } from '../src/jobs';
import { mediaApp } from './support';

type App = Awaited<ReturnType<typeof mediaApp>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function job(app: App, jobId: string) {
  const res = await app.call('media_query', { action: 'get', jobId }).expect(200);
  return res.body.result;
}

/** Polls a job until `done` says so; returns every record seen. */
async function until(app: App, jobId: string, done: (j: { state: string; percent: number }) => boolean, timeoutMs = 30_000) {
  const seen: { state: string; percent: number }[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const j = await job(app, jobId);
    seen.push(j);
    if (done(j)) return seen;
    if (Date.now() > deadline) throw new Error(`job ${jobId} stayed ${j.state} (${j.percent}%)`);
    await sleep(100);
  }
}

/** ffmpeg processes whose command line names the folder. */
function ffmpegUnder(folder: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
        // ffmpeg itself (started by its resolved path inside the sandbox), not the bubblewrap around it
        return path.basename(cmd.split('\0')[0]) === 'ffmpeg' && cmd.includes(folder);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const dirs = { ws: tempDir('media-jobs-ws-'), data: tempDir('media-jobs-data-') };
const env = { MEDIA_JOB_THRESHOLD_SECONDS: '10', MEDIA_JOB_CONCURRENCY: '1', MEDIA_JOB_QUEUE_MAX: '1' };
// Real engines on a shared 2-core machine: a call can take seconds while other suites run.
jest.setTimeout(60_000);

let m: App;

describeWithProgram('ffmpeg', 'ffmpeg', 'media-mcp jobs', () => {
  beforeAll(async () => {
    m = await mediaApp(env, undefined, { ws: dirs.ws.dir, data: dirs.data.dir });
    // 60 s of 320x240 test pattern with a tone: VP9 takes it a few seconds, long enough to watch and cancel.
    makeClip(path.join(m.ws, 'long.mp4'), { seconds: 60 });
    makeTone(path.join(m.ws, 'tone20.wav'), { seconds: 20 });
  }, 60_000);

  afterAll(async () => {
    await m?.close(true);
    dirs.ws.cleanup();
    dirs.data.cleanup();
  });

  it('runs media over the threshold as a job: answered at once, progress from ffmpeg, outputs with analysis', async () => {
    const started = Date.now();
    const res = await m
      .call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'webm_vp9', output: 'watched' })
      .expect(200);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.body.result).toMatchObject({ job: { id: expect.any(String), state: 'queued' }, output: 'media-output/watched.webm' });
    const seen = await until(m, res.body.result.job.id, (j) => !['queued', 'running'].includes(j.state));
    const final = seen[seen.length - 1] as unknown as {
      state: string;
      percent: number;
      outputs: { path: string; analysis: { duration: number; streams: { codec: string }[] } }[];
    };
    expect(final.state).toBe('succeeded');
    expect(final.percent).toBe(100);
    // At least one reading strictly between start and end: progress came from ffmpeg while it ran.
    expect(seen.some((j) => j.state === 'running' && j.percent > 0 && j.percent < 100)).toBe(true);
    expect(final.outputs[0].path).toBe('media-output/watched.webm');
    expect(final.outputs[0].analysis.duration).toBeCloseTo(60, 0);
    expect(final.outputs[0].analysis.streams.map((s) => s.codec).sort()).toEqual(['opus', 'vp9']);
  });

  it('answers short work at once without a job, and any work as a job when asked', async () => {
    const now = await m.call('media_process', { path: 'tone20.wav', operation: 'trim', duration: 5 }).expect(200);
    expect(now.body.result.outputs[0].analysis.duration).toBeCloseTo(5, 1);
    const asked = await m
      .call('media_process', { path: 'tone20.wav', operation: 'trim', duration: 2, async: true, output: 'asked' })
      .expect(200);
    const seen = await until(m, asked.body.result.job.id, (j) => j.state === 'succeeded');
    expect(seen[seen.length - 1]).toMatchObject({ outputs: [{ path: 'media-output/asked.wav' }] });
  });

  it('cancels a queued job and a running one: ffmpeg killed, partial output removed; a full queue is refused', async () => {
    const a = (
      await m.call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'webm_vp9', output: 'cancel-a' }).expect(200)
    ).body.result.job.id;
    const b = (
      await m.call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'webm_vp9', output: 'cancel-b' }).expect(200)
    ).body.result.job.id;
    // Concurrency 1 and a queue of 1: a third job has no room.
    const full = await m.call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'mp3', output: 'cancel-c' }).expect(429);
    expect(full.body.error).toMatch(/MEDIA_JOB_QUEUE_MAX/);
    const queued = (await m.call('media_query', { action: 'cancel', jobId: b }).expect(200)).body.result;
    expect(queued).toMatchObject({ state: 'cancelled', error: { code: 'CANCELLED' } });
    await until(m, a, (j) => j.state === 'running' && j.percent > 0);
    const outDir = path.join(m.ws, 'media-output');
    expect(ffmpegUnder(outDir).length).toBe(1);
    expect(fs.readdirSync(outDir).some((f) => f.includes('.partial.'))).toBe(true);
    const running = (await m.call('media_query', { action: 'cancel', jobId: a }).expect(200)).body.result;
    expect(running).toMatchObject({ state: 'cancelled', error: { code: 'CANCELLED' } });
    expect(running.percent).toBeGreaterThan(0);
    expect(running.percent).toBeLessThan(100);
    expect(ffmpegUnder(outDir)).toEqual([]);
    expect(fs.readdirSync(outDir).filter((f) => f.includes('.partial.') || f.startsWith('cancel-'))).toEqual([]);
    const again = await m.call('media_query', { action: 'cancel', jobId: a }).expect(409);
    expect(again.body.code).toBe('CONFLICT');
    await m.call('media_query', { action: 'get', jobId: 'no-such-job' }).expect(404);
  });

  it('lists jobs newest first with cursor paging and a state filter', async () => {
    const all = (await m.call('media_query', { action: 'list' }).expect(200)).body.result.items;
    expect(all.length).toBeGreaterThanOrEqual(4);
    const created = all.map((j: { createdAt: string }) => j.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await m.call('media_query', { action: 'list', limit: 1, ...(cursor ? { cursor } : {}) }).expect(200)).body.result;
      expect(page.items.length).toBe(1);
      seen.push(page.items[0].id);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((j: { id: string }) => j.id));
    const cancelled = (await m.call('media_query', { action: 'list', state: 'cancelled' }).expect(200)).body.result.items;
    expect(cancelled.length).toBe(2);
    await m.call('media_query', { action: 'list', cursor: 'garbage' }).expect(400);
  });

  it('keeps job records over a restart; a job running at shutdown is marked interrupted', async () => {
    const res = await m
      .call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'webm_vp9', output: 'restart' })
      .expect(200);
    const id = res.body.result.job.id;
    await until(m, id, (j) => j.state === 'running');
    await m.close(true);
    m = await mediaApp(env, undefined, { ws: dirs.ws.dir, data: dirs.data.dir });
    const after = await job(m, id);
    expect(after).toMatchObject({ state: 'interrupted', error: { code: 'INTERRUPTED' } });
    expect(ffmpegUnder(path.join(m.ws, 'media-output'))).toEqual([]);
    expect(fs.readdirSync(path.join(m.ws, 'media-output')).filter((f) => f.includes('.partial.') || f.startsWith('restart'))).toEqual([]);
    // Older records are still there.
    const list = (await m.call('media_query', { action: 'list', state: 'succeeded' }).expect(200)).body.result.items;
    expect(list.length).toBeGreaterThanOrEqual(2);
  });

  it('marks a job left running by a process that died as interrupted and removes its partial file at start', async () => {
    const data = tempDir('media-crash-');
    try {
      const partial = path.join(data.dir, '.abc.partial.mp4');
      fs.writeFileSync(partial, 'half a file');
      const db = await SqliteDb.open(path.join(data.dir, 'media-mcp', 'jobs.sqlite'));
      const store = await JobStore.open(db, testLogger());
      const rec = await store.create('transcode', 'x.mp4', partial);
      await store.started(rec.id);
      await db.close(); // the process "dies" here: no finish() is written
      const again = await JobStore.open(await SqliteDb.open(path.join(data.dir, 'media-mcp', 'jobs.sqlite')), testLogger());
      expect(await again.get(rec.id)).toMatchObject({ state: 'interrupted', error: { code: 'INTERRUPTED' } });
      expect(fs.existsSync(partial)).toBe(false);
    } finally {
      data.cleanup();
    }
  });

  it('stops a job at its time limit with TIMEOUT', async () => {
    const quick = await mediaApp({ MEDIA_JOB_TIMEOUT_MS: '1000' });
    try {
      fs.copyFileSync(path.join(m.ws, 'long.mp4'), path.join(quick.ws, 'long.mp4'));
      const res = await quick
        .call('media_process', { path: 'long.mp4', operation: 'transcode', preset: 'webm_vp9', async: true })
        .expect(200);
      const seen = await until(quick, res.body.result.job.id, (j) => !['queued', 'running'].includes(j.state));
      expect(seen[seen.length - 1]).toMatchObject({
        state: 'failed',
        error: { code: 'TIMEOUT', message: expect.stringMatching(/MEDIA_JOB_TIMEOUT_MS/) },
      });
      expect(fs.readdirSync(path.join(quick.ws, 'media-output'))).toEqual([]);
    } finally {
      await quick.close();
    }
  });
});
