import { z } from 'zod';

export const languageField = z
  .string()
  .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$/)
  .optional()
  .describe(
    'Spoken language as an ISO 639-1 code ("en"); the embedded pocketsphinx engine knows only "en"; the OpenAI-compatible engine passes it on. Omitted: the engine decides.',
  );

export const CAPS =
  'Any audio or video ffmpeg decodes is converted to 16 kHz mono; long audio is cut into chunks of TRANSCRIBE_CHUNK_SECONDS (default 30 s) transcribed in order with progress logged, then joined. ' +
  'Caps: TRANSCRIBE_MAX_SECONDS of audio (default 4 h), TOOL_TIMEOUT_MS in all (default 10 min). ' +
  'Answers text, segments (start/end seconds), language, duration, engine, model, chunks and real_time_factor. Silence gives empty text.';
