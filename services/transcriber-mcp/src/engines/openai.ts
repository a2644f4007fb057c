import fs from 'node:fs/promises';
import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ChunkOptions, ChunkResult, Engine } from './types';

/** The part of OpenAI's `verbose_json` transcription answer this service reads. */
const verboseJson = z.object({
  text: z.string(),
  language: z.string().optional(),
  duration: z.number().optional(),
  segments: z
    .array(z.object({ start: z.number(), end: z.number(), text: z.string() }).loose())
    .optional()
    .default([]),
});

/** ISO 639-1 codes for the language names OpenAI's verbose_json reports ("english"). */
const LANGUAGE_CODES: Record<string, string> = {
  english: 'en',
  german: 'de',
  french: 'fr',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  russian: 'ru',
  chinese: 'zh',
  japanese: 'ja',
  korean: 'ko',
  arabic: 'ar',
  polish: 'pl',
  turkish: 'tr',
  swedish: 'sv',
  ukrainian: 'uk',
};

/** `STT_URL` as given when it already names the route, else `{url}/v1/audio/transcriptions`. */
export function transcriptionsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  if (/\/audio\/transcriptions$/.test(trimmed)) return trimmed;
  return /\/v1$/.test(trimmed) ? `${trimmed}/audio/transcriptions` : `${trimmed}/v1/audio/transcriptions`;
}

/**
 * The configured alternative: an OpenAI-compatible `POST /v1/audio/transcriptions` (whisper.cpp's
 * server, hosted APIs). Each chunk is sent as a 16 kHz mono WAV in multipart/form-data with
 * `response_format=verbose_json`; the answer's segments give the times.
 */
export function openAiEngine(opts: { url: string; apiKey?: string; model: string }): Engine {
  const url = transcriptionsUrl(opts.url);
  const where = new URL(url).origin;
  return {
    name: 'openai-compatible',
    model: opts.model,
    languages: ['auto'],
    async ready() {},
    async health() {
      return { engine: 'openai-compatible', server: where, model: opts.model };
    },
    async transcribeChunk(wavFile: string, options: ChunkOptions): Promise<ChunkResult> {
      const form = new FormData();
      form.append('file', new Blob([await fs.readFile(wavFile)], { type: 'audio/wav' }), 'audio.wav');
      form.append('model', opts.model);
      form.append('response_format', 'verbose_json');
      if (options.language) form.append('language', options.language);
      const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          body: form,
          headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
          signal: AbortSignal.any(signals),
        });
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : err;
        const timedOut = (err as Error).name === 'TimeoutError';
        throw new AppError(
          timedOut ? 'TIMEOUT' : 'UPSTREAM_ERROR',
          timedOut
            ? `The transcription server ${where} did not answer within ${options.timeoutMs} ms (STT_TIMEOUT_MS).`
            : `The transcription server ${where} is unreachable (${(err as Error).message}); check STT_URL.`,
        );
      }
      const body = await res.text();
      if (!res.ok) {
        throw new AppError('UPSTREAM_ERROR', `The transcription server ${where} answered HTTP ${res.status}: ${body.slice(0, 300)}`, {
          details: { status: res.status },
        });
      }
      let parsed: z.output<typeof verboseJson>;
      try {
        parsed = verboseJson.parse(JSON.parse(body));
      } catch {
        throw new AppError('UPSTREAM_ERROR', `The transcription server ${where} did not answer verbose_json (text, segments).`);
      }
      const lang = parsed.language?.toLowerCase();
      return {
        text: parsed.text.trim(),
        segments: parsed.segments.map((s) => ({ start: s.start, end: s.end, text: s.text.trim() })).filter((s) => s.text),
        language: lang ? (LANGUAGE_CODES[lang] ?? lang) : options.language,
      };
    },
  };
}
