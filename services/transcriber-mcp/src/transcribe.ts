import fs from 'node:fs/promises';
import path from 'node:path';
import type { Confinement } from '@mcp-fleet/sandbox';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { convertToPcm, planCuts, writeChunk } from './audio';
import type { Engine, Segment } from './engines/types';
import type { AudioInput } from './inputs';

export interface Transcript {
  text: string;
  segments: Segment[];
  language: string;
  /** Seconds of audio. */
  duration: number;
  engine: string;
  model: string;
  /** How many chunks the audio was cut into (TRANSCRIBE_CHUNK_SECONDS). */
  chunks: number;
  processing_ms: number;
  /** processing time / audio length. */
  real_time_factor: number;
  source: string;
}

export interface Progress {
  chunk: number;
  chunks: number;
  /** Seconds of audio transcribed so far, and in all. */
  done: number;
  total: number;
}

export interface TranscribeDeps {
  engine: Engine;
  ffmpeg: string;
  /** ffmpeg runs inside this sandbox. */
  confinement: Confinement;
  scratchDir: string;
  chunkSeconds: number;
  maxSeconds: number;
}

export interface TranscribeOptions {
  language?: string;
  signal: AbortSignal;
  timeoutMs: number;
  logger: Logger;
  onProgress?: (p: Progress) => void;
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The language code a caller gave, checked against what the engine accepts. */
export function checkLanguage(engine: Engine, language: string | undefined): string | undefined {
  if (language === undefined) return undefined;
  const code = language.toLowerCase().split(/[-_]/)[0];
  if (engine.languages.includes('auto') || engine.languages.includes(code)) return code;
  throw new AppError(
    'VALIDATION_ERROR',
    `language "${language}" is not supported by the ${engine.name} engine (it knows: ${engine.languages.join(', ')}); set STT_URL for an engine with more languages.`,
    { details: [{ path: 'language', message: 'unsupported language' }] },
  );
}

/**
 * ffmpeg to 16 kHz mono PCM, cut into chunks at quiet points, each chunk through the engine in
 * order (progress logged and reported), segments shifted to the audio's time line and joined.
 */
export async function transcribe(deps: TranscribeDeps, input: AudioInput, options: TranscribeOptions): Promise<Transcript> {
  const started = Date.now();
  const language = checkLanguage(deps.engine, options.language);
  await deps.engine.ready();
  await fs.mkdir(deps.scratchDir, { recursive: true, mode: 0o700 });
  const work = await fs.mkdtemp(path.join(deps.scratchDir, 'job-'));
  const deadline = started + options.timeoutMs;
  const left = () => Math.max(1000, deadline - Date.now());
  try {
    const pcm = await convertToPcm(deps.ffmpeg, deps.confinement, input.file, path.join(work, 'audio.pcm'), {
      signal: options.signal,
      timeoutMs: left(),
      source: input.source,
      maxSeconds: deps.maxSeconds,
    });
    if (pcm.seconds > deps.maxSeconds) {
      throw new AppError(
        'VALIDATION_ERROR',
        `The audio is longer than ${deps.maxSeconds} s (TRANSCRIBE_MAX_SECONDS); send a shorter part.`,
        {
          details: [{ path: 'audio', message: 'too long' }],
        },
      );
    }
    const cuts = await planCuts(pcm.file, pcm.seconds, deps.chunkSeconds);
    const chunks = cuts.length - 1;
    const segments: Segment[] = [];
    let detected: string | undefined;
    for (let i = 0; i < chunks; i++) {
      const chunk = await writeChunk(pcm.file, cuts, i, work);
      const out = await deps.engine.transcribeChunk(chunk.file, { language, signal: options.signal, timeoutMs: left() });
      await fs.rm(chunk.file, { force: true });
      detected ??= out.language;
      for (const s of out.segments) {
        segments.push({ start: round(chunk.start + s.start), end: round(Math.min(chunk.end, chunk.start + s.end)), text: s.text });
      }
      if (!out.segments.length && out.text) segments.push({ start: round(chunk.start), end: round(chunk.end), text: out.text });
      const progress = { chunk: i + 1, chunks, done: round(chunk.end, 1), total: round(pcm.seconds, 1) };
      options.logger.info('transcription progress', { ...progress, engine: deps.engine.name });
      options.onProgress?.(progress);
    }
    const processing = Date.now() - started;
    return {
      text: segments
        .map((s) => s.text)
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim(),
      segments,
      language: language ?? detected ?? 'unknown',
      duration: round(pcm.seconds),
      engine: deps.engine.name,
      model: deps.engine.model,
      chunks,
      processing_ms: processing,
      real_time_factor: pcm.seconds > 0 ? round(processing / 1000 / pcm.seconds, 4) : 0,
      source: input.source,
    };
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** A tool's whole run: open the input, transcribe it under the call's signal and time limit, release the input. */
export async function transcribeInput(
  deps: TranscribeDeps,
  open: () => Promise<AudioInput>,
  language: string | undefined,
  ctx: { signal: AbortSignal; timeoutMs: number; logger: Logger; progress?: (progress: number, total?: number, message?: string) => void },
): Promise<Transcript> {
  const audio = await open();
  try {
    return await transcribe(deps, audio, {
      language,
      signal: ctx.signal,
      timeoutMs: ctx.timeoutMs,
      logger: ctx.logger,
      // seconds of audio done of the total: MCP progress through the gateway when the client asked for it
      onProgress: (p) => ctx.progress?.(p.done, p.total, `chunk ${p.chunk} of ${p.chunks}`),
    });
  } finally {
    await audio.release();
  }
}
