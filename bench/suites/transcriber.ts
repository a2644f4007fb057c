/**
 * transcriber-mcp: real-time factor (processing time / audio length) of transcribe_audio on a
 * 60-second spoken clip (espeak-ng), through POST /tools/transcribe_audio on the service process with
 * its default 30 s chunks and with one chunk, against the baseline of ffmpeg + pocketsphinx_continuous
 * spawned directly on the whole clip (the same conversion and recognizer, no HTTP, no chunking),
 * measured in the same run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@mcp-fleet/testing/mail';
import { markdownTable, startServiceProcess, stopProcesses } from '../lib';

const MODEL = '/usr/share/pocketsphinx/model/en-us';
const CLIP_SECONDS = 60;
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

const TEXT = [
  'hello world this is a test of the speech recognition system.',
  'the weather is nice today and the sun is shining.',
  'we are going to the store to buy some bread and milk.',
  'the meeting starts at nine in the morning and ends at noon.',
  'please send the report to the team before the end of the week.',
].join(' ');

function runOk(program: string, args: string[]): string {
  const res = spawnSync(program, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`${program} ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

export async function run(): Promise<{ json: unknown; markdown: string }> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-transcriber-ws-'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-transcriber-data-'));
  const children = [];
  try {
    // About 20 s of speech, looped and cut to exactly 60 s, as 44.1 kHz stereo MP3 (ffmpeg has work to do).
    runOk('espeak-ng', ['-v', 'en-us+klatt', '-s', '140', '-w', path.join(ws, 'speech.wav'), TEXT]);
    const clip = path.join(ws, 'clip.mp3');
    runOk('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error', '-y', '-stream_loop', '-1', '-i', path.join(ws, 'speech.wav')],
      ...['-af', 'apad=pad_dur=1', '-t', String(CLIP_SECONDS), '-ac', '2', '-ar', '44100', '-c:a', 'libmp3lame', '-b:a', '128k', clip],
    ]);

    // Baseline: ffmpeg to 16 kHz mono WAV, then one pocketsphinx_continuous on the whole clip.
    const t0 = performance.now();
    const wav = path.join(ws, 'clip16.wav');
    runOk('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-i', clip, '-ac', '1', '-ar', '16000', wav]);
    const hyp = runOk('pocketsphinx_continuous', [
      ...['-logfn', '/dev/null', '-time', 'yes', '-hmm', `${MODEL}/en-us`, '-lm', `${MODEL}/en-us.lm.bin`],
      ...['-dict', `${MODEL}/cmudict-en-us.dict`, '-infile', wav],
    ]);
    const directMs = performance.now() - t0;
    const directWords = hyp.split('\n').filter((l) => /^[a-z']+(\(\d\))? \d/.test(l)).length;
    process.stdout.write(`transcriber direct: ${round(directMs / 1000, 1)} s, RTF ${round(directMs / 1000 / CLIP_SECONDS)}\n`);

    const rows: { path: string; seconds: number; rtf: number; chunks: number | string; words: number }[] = [
      {
        path: 'baseline: ffmpeg + pocketsphinx_continuous spawned directly, whole clip',
        seconds: round(directMs / 1000, 2),
        rtf: round(directMs / 1000 / CLIP_SECONDS),
        chunks: 1,
        words: directWords,
      },
    ];
    for (const chunk of ['30', '60']) {
      const port = await freePort();
      const child = await startServiceProcess(
        'transcriber-mcp',
        { WORKSPACE_ROOTS: ws, DATA_DIR: data, TRANSCRIBE_CHUNK_SECONDS: chunk },
        port,
      );
      children.push(child);
      const t1 = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/tools/transcribe_audio`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ file_path: 'clip.mp3' }),
      });
      const ms = performance.now() - t1;
      const body = (await res.json()) as { result: { text: string; chunks: number; duration: number; real_time_factor: number } };
      if (!res.ok) throw new Error(`transcribe_audio answered ${res.status}: ${JSON.stringify(body)}`);
      const r = body.result;
      rows.push({
        path: `POST /tools/transcribe_audio, TRANSCRIBE_CHUNK_SECONDS=${chunk}`,
        seconds: round(ms / 1000, 2),
        rtf: round(ms / 1000 / r.duration),
        chunks: r.chunks,
        words: r.text.split(/\s+/).filter(Boolean).length,
      });
      process.stdout.write(
        `transcriber chunk ${chunk}: ${round(ms / 1000, 1)} s, RTF ${round(ms / 1000 / r.duration)} (service says ${r.real_time_factor})\n`,
      );
      await stopProcesses([child]);
    }
    const ratios = rows.slice(1).map((r) => ({ path: r.path, ratio: round(r.rtf / rows[0].rtf, 2) }));
    const markdown = [
      `### transcriber-mcp real-time factor on a ${CLIP_SECONDS}-second spoken clip (espeak-ng en-us+klatt, MP3 44.1 kHz stereo; ${os.cpus().length} CPUs)`,
      '',
      markdownTable(
        ['path', 'seconds', 'real-time factor', 'chunks', 'words recognised'],
        rows.map((r) => [r.path, r.seconds, r.rtf, r.chunks, r.words]),
      ),
      '',
      markdownTable(
        ['ratio to the baseline', 'RTF ratio'],
        ratios.map((r) => [r.path, r.ratio]),
      ),
    ].join('\n');
    return { json: { clipSeconds: CLIP_SECONDS, rows, ratios }, markdown };
  } finally {
    await stopProcesses(children);
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(data, { recursive: true, force: true });
  }
}
