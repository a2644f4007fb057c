import fs from 'node:fs/promises';
import path from 'node:path';
import type { Confinement } from '@mcp-fleet/sandbox';
import { AppError } from '@mcp-fleet/kit';
import { run } from './engines/run';

/** The recognizers' input: 16 kHz, mono, signed 16-bit little-endian PCM. */
export const SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = SAMPLE_RATE * 2;

/** Demuxers ffmpeg may use on a caller's file (no playlists or concat lists that open other files). */
const DEMUXERS = [
  'wav',
  'w64',
  'mp3',
  'flac',
  'ogg',
  'mov',
  'mp4',
  'm4a',
  '3gp',
  '3g2',
  'mj2',
  'matroska',
  'webm',
  'aac',
  'aiff',
  'caf',
  'amr',
  'ac3',
  'eac3',
  'avi',
  'asf',
  'wv',
  'ape',
  'tta',
  'au',
  'voc',
  'mpeg',
  'mpegts',
  'flv',
  'nut',
  'opus',
  'speex',
  'gsm',
  'dts',
].join(',');

/**
 * Converts any audio or video file to raw 16 kHz mono PCM with ffmpeg (local file only, known
 * demuxers only). Something ffmpeg cannot read as audio is VALIDATION_ERROR.
 */
export async function convertToPcm(
  ffmpeg: string,
  confinement: Confinement,
  input: string,
  output: string,
  opts: { signal?: AbortSignal; timeoutMs: number; source: string; maxSeconds: number },
): Promise<{ file: string; seconds: number }> {
  const args = [
    '-nostdin',
    '-hide_banner',
    '-nostats',
    '-v',
    'error',
    '-y',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    DEMUXERS,
    '-i',
    `file:${input}`,
    '-vn',
    '-sn',
    '-dn',
    '-t',
    String(opts.maxSeconds + 1),
    '-ac',
    '1',
    '-ar',
    String(SAMPLE_RATE),
    '-f',
    's16le',
    '-acodec',
    'pcm_s16le',
    `file:${output}`,
  ];
  // ffmpeg reads the roots and scratch and writes only the job's own folder.
  const res = await run(ffmpeg, args, {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    debianPackage: 'ffmpeg',
    confinement: { ...confinement, writable: [path.dirname(output)] },
  });
  const size = await fs.stat(output).then(
    (s) => s.size,
    () => -1,
  );
  if (res.code !== 0 || size < 0) {
    const why = res.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-2)
      .join('; ')
      .replace(/file:\S+/g, 'input')
      .slice(0, 300);
    throw new AppError(
      'VALIDATION_ERROR',
      `${opts.source} is not audio ffmpeg can decode (${why || `exit ${res.code}`}); send an audio or video file.`,
      {
        details: [{ path: 'audio', message: 'not decodable audio' }],
      },
    );
  }
  return { file: output, seconds: size / BYTES_PER_SECOND };
}

/** A 44-byte RIFF header for `dataBytes` of 16 kHz mono s16le PCM. */
export function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(SAMPLE_RATE, 24);
  h.writeUInt32LE(BYTES_PER_SECOND, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

export interface Chunk {
  index: number;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** A WAV file with this chunk's samples. */
  file: string;
}

const FRAME = SAMPLE_RATE / 100; // 10 ms

/** Index (in samples, from the window start) of the quietest 10 ms frame of a PCM window. */
function quietestFrame(pcm: Buffer): number {
  let best = 0;
  let bestEnergy = Infinity;
  const samples = Math.floor(pcm.length / 2);
  for (let f = 0; f + FRAME <= samples; f += FRAME) {
    let e = 0;
    for (let i = f; i < f + FRAME; i++) e += Math.abs(pcm.readInt16LE(i * 2));
    if (e < bestEnergy) {
      bestEnergy = e;
      best = f;
    }
  }
  return best;
}

/**
 * Plans the chunks of a PCM file: about `chunkSeconds` each, every cut moved to the quietest
 * 10 ms of the 2 s before it so words are rarely split. Returns sample offsets.
 */
export async function planCuts(pcmFile: string, totalSeconds: number, chunkSeconds: number): Promise<number[]> {
  const total = Math.round(totalSeconds * SAMPLE_RATE);
  const size = chunkSeconds * SAMPLE_RATE;
  const cuts = [0];
  if (total <= size * 1.25) return [0, total];
  const fh = await fs.open(pcmFile, 'r');
  try {
    const window = 2 * SAMPLE_RATE;
    while (total - cuts[cuts.length - 1] > size * 1.25) {
      const target = cuts[cuts.length - 1] + size;
      const from = target - window;
      const buf = Buffer.alloc(window * 2);
      const { bytesRead } = await fh.read(buf, 0, buf.length, from * 2);
      cuts.push(from + quietestFrame(buf.subarray(0, bytesRead)));
    }
  } finally {
    await fh.close();
  }
  cuts.push(total);
  return cuts;
}

/** Writes chunk `index` (samples cuts[index]..cuts[index+1]) as a WAV file in `dir`. */
export async function writeChunk(pcmFile: string, cuts: number[], index: number, dir: string): Promise<Chunk> {
  const from = cuts[index];
  const to = cuts[index + 1];
  const fh = await fs.open(pcmFile, 'r');
  const data = Buffer.alloc((to - from) * 2);
  try {
    await fh.read(data, 0, data.length, from * 2);
  } finally {
    await fh.close();
  }
  const file = path.join(dir, `chunk-${index}.wav`);
  await fs.writeFile(file, Buffer.concat([wavHeader(data.length), data]), { mode: 0o600 });
  return { index, start: from / SAMPLE_RATE, end: to / SAMPLE_RATE, file };
}
