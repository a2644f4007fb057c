/**
 * media-mcp: thumbnails per second of a 12-megapixel JPEG through POST /tools/media_process, against
 * sharp called directly in this process (the same operation, no HTTP, no checks) as the baseline; and
 * the time media_analyze takes on a 1-minute video (ffprobe + EBU R128 loudness), against running the
 * same ffprobe and ffmpeg ebur128 commands directly. Both measured in the same run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { makeClip } from '@mcp-fleet/testing';
import { freePort } from '@mcp-fleet/testing/mail';
import { markdownTable, runLoad, startServiceProcess, stopProcesses } from '../lib';

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeIt(n: number, fn: () => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Closed loop over `durationMs` with `concurrency` workers; returns operations per second. */
async function rate(concurrency: number, durationMs: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let i = 0;
  let done = 0;
  const end = performance.now() + durationMs;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await fn(i++);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-media-ws-'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-media-data-'));
  const concurrency = 2;
  // 4000 × 3000 with gaussian noise: a 12-megapixel JPEG that does not compress to nothing.
  const jpeg = path.join(ws, 'photo12mp.jpg');
  await sharp({
    create: { width: 4000, height: 3000, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .jpeg({ quality: 85 })
    .toFile(jpeg);
  const video = path.join(ws, 'minute.mp4');
  makeClip(video, { seconds: 60, size: '1280x720' });

  const port = await freePort();
  const child = await startServiceProcess('media-mcp', { WORKSPACE_ROOTS: ws, DATA_DIR: data, TOOL_TIMEOUT_MS: '120000' }, port);
  const origin = `http://127.0.0.1:${port}`;
  try {
    let n = 0;
    const tool = await runLoad(
      origin,
      {
        path: '/tools/media_process',
        body: () => JSON.stringify({ path: 'photo12mp.jpg', operation: 'image', thumbnail: 256, output: `thumbs/t${n++}.jpg` }),
      },
      concurrency,
      options.durationMs,
    );
    process.stdout.write(`media thumbnail via tool c=${concurrency}: ${tool.throughput}/s p50 ${tool.p50Ms} ms errors ${tool.errors}\n`);
    fs.mkdirSync(path.join(ws, 'direct'), { recursive: true });
    await sharp(jpeg)
      .resize(256, 256, { fit: 'inside' })
      .jpeg()
      .toFile(path.join(ws, 'direct', 'warm.jpg'));
    const direct = await rate(concurrency, options.durationMs, (i) =>
      sharp(jpeg)
        .autoOrient()
        .resize(256, 256, { fit: 'inside', withoutEnlargement: true })
        .jpeg()
        .toFile(path.join(ws, 'direct', `d${i}.jpg`)),
    );
    process.stdout.write(`media thumbnail direct sharp c=${concurrency}: ${round(direct, 1)}/s\n`);

    const samples = 5;
    const call = (body: object) =>
      fetch(`${origin}/tools/media_analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => {
        if (r.status !== 200) throw new Error(`media_analyze answered ${r.status}: ${await r.text()}`);
      });
    const spawnOk = (program: string, args: string[]) => {
      const r = spawnSync(program, args, { maxBuffer: 64 * 1024 * 1024 });
      if (r.status !== 0) throw new Error(`${program} failed: ${r.stderr}`);
    };
    const probeArgs = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', video];
    const ebur = [
      '-nostdin',
      '-hide_banner',
      '-nostats',
      '-i',
      video,
      '-map',
      '0:a:0',
      '-vn',
      '-af',
      'ebur128=peak=true',
      '-f',
      'null',
      '-',
    ];
    // Interleaved, so the tool and its baseline see the same machine load.
    const withLoudness: number[] = [];
    const probeOnly: number[] = [];
    const ffboth: number[] = [];
    const ffprobe: number[] = [];
    for (let i = 0; i < samples; i++) {
      withLoudness.push(...(await timeIt(1, () => call({ path: 'minute.mp4' }))));
      ffboth.push(...(await timeIt(1, () => (spawnOk('ffprobe', probeArgs), spawnOk('ffmpeg', ebur)))));
      probeOnly.push(...(await timeIt(1, () => call({ path: 'minute.mp4', loudness: false }))));
      ffprobe.push(...(await timeIt(1, () => spawnOk('ffprobe', probeArgs))));
    }
    const analysis = [
      {
        what: 'media_analyze, loudness on',
        tool: median(withLoudness),
        direct: median(ffboth),
        baseline: 'ffprobe + ffmpeg ebur128 spawned directly',
      },
      { what: 'media_analyze, loudness off', tool: median(probeOnly), direct: median(ffprobe), baseline: 'ffprobe spawned directly' },
    ].map((r) => ({ ...r, tool: round(r.tool, 1), direct: round(r.direct, 1), ratio: round(r.tool / r.direct) }));
    for (const a of analysis) process.stdout.write(`media ${a.what}: ${a.tool} ms (direct ${a.direct} ms, ratio ${a.ratio})\n`);

    const thumbs = {
      tool: tool.throughput,
      toolP50Ms: tool.p50Ms,
      errors: tool.errors,
      direct: round(direct, 1),
      ratio: round(tool.throughput / direct),
    };
    const markdown = [
      `### media-mcp thumbnails of a 12-megapixel JPEG (4000 × 3000, 256 px thumbnail, concurrency ${concurrency})`,
      '',
      markdownTable(
        ['path', 'thumbnails/s', 'p50 ms', 'errors'],
        [
          ['POST /tools/media_process (operation image, thumbnail 256)', thumbs.tool, thumbs.toolP50Ms, thumbs.errors],
          ['baseline: sharp in-process, same resize, no HTTP', thumbs.direct, '', ''],
          ['ratio tool / baseline', thumbs.ratio, '', ''],
        ],
      ),
      '',
      `### media-mcp analysis of a 1-minute video (1280 × 720 H.264 25 fps + stereo AAC; median of ${samples})`,
      '',
      markdownTable(
        ['call', 'tool ms', 'baseline', 'baseline ms', 'ratio'],
        analysis.map((a) => [a.what, a.tool, a.baseline, a.direct, a.ratio]),
      ),
    ].join('\n');
    return { json: { thumbnails: thumbs, analysis }, markdown };
  } finally {
    await stopProcesses([child]);
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(data, { recursive: true, force: true });
  }
}
