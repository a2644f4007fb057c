import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sandbox } from '@mcp-fleet/sandbox';
import { describeWithProgram, serve } from '@mcp-fleet/testing';
import express from 'express';
import multer from 'multer';
import { pocketsphinxEngine } from '../src/engines/pocketsphinx';
import { transcriptionsUrl } from '../src/engines/openai';
import { speak, transcriberApp, wordErrorRate } from './support';

/** Measured through the local OpenAI-compatible server below (pocketsphinx behind it): 0.27 for the sentence, 0.33 chunked. */
const WER_BOUND = 0.45;
const SENTENCE = 'hello world this is a test of the speech recognition system';
const KEY = 'sk-test-transcriber';

interface Seen {
  model: string;
  responseFormat: string;
  language?: string;
  wav: { sampleRate: number; channels: number };
}

/**
 * A local server speaking OpenAI's `POST /v1/audio/transcriptions`: bearer auth, multipart/form-data
 * with `file`, `model`, `response_format`, `language`; answers `verbose_json` (task, language name,
 * duration, text, segments with id/seek/start/end/text). It recognises the uploaded WAV with the real
 * pocketsphinx engine, as whisper.cpp's server would with whisper.
 */
async function openAiServer(tmp: string) {
  const seen: Seen[] = [];
  const sandbox = Sandbox.open({ SANDBOX: 'bwrap', SANDBOX_BWRAP: 'bwrap', SANDBOX_READ_ONLY_PATHS: [] });
  const engine = pocketsphinxEngine('pocketsphinx_continuous', '/usr/share/pocketsphinx/model/en-us', { sandbox, readOnly: [os.tmpdir()] });
  const app = express();
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 25 * 1024 * 1024 } });
  app.post('/v1/audio/transcriptions', upload.single('file'), async (req, res) => {
    if (req.get('authorization') !== `Bearer ${KEY}`) {
      res.status(401).json({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      return;
    }
    const body = req.body as Record<string, string>;
    if (!req.file || !body.model) {
      res.status(400).json({ error: { message: "'file' and 'model' are required", type: 'invalid_request_error' } });
      return;
    }
    const wav = req.file.buffer;
    seen.push({
      model: body.model,
      responseFormat: body.response_format,
      language: body.language,
      wav: { sampleRate: wav.readUInt32LE(24), channels: wav.readUInt16LE(22) },
    });
    if (body.model === 'broken') {
      res.status(500).json({ error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
      return;
    }
    const file = path.join(tmp, `up-${seen.length}.wav`);
    fs.writeFileSync(file, wav);
    const out = await engine.transcribeChunk(file, { timeoutMs: 30_000 });
    res.json({
      task: 'transcribe',
      language: 'english',
      duration: (wav.length - 44) / 32000,
      text: ` ${out.text}`,
      segments: out.segments.map((s, id) => ({ id, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: [], temperature: 0 })),
    });
  });
  const server = await serve(app);
  return { server, seen };
}

jest.setTimeout(60_000);

describe('transcriptionsUrl', () => {
  it('appends the OpenAI route to a base URL and keeps a full one', () => {
    expect(transcriptionsUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1/audio/transcriptions');
    expect(transcriptionsUrl('https://api.example.com/v1/')).toBe('https://api.example.com/v1/audio/transcriptions');
    expect(transcriptionsUrl('http://h/inference/audio/transcriptions')).toBe('http://h/inference/audio/transcriptions');
  });
});

describeWithProgram('espeak-ng', 'espeak-ng', 'transcriber-mcp OpenAI-compatible engine', () => {
  describeWithProgram('pocketsphinx_continuous', 'pocketsphinx pocketsphinx-en-us', 'behind a local /v1/audio/transcriptions', () => {
    describeWithProgram('ffmpeg', 'ffmpeg', 'with ffmpeg', () => {
      let stt: Awaited<ReturnType<typeof openAiServer>>;
      let t: Awaited<ReturnType<typeof transcriberApp>>;
      beforeAll(async () => {
        t = await transcriberApp();
        stt = await openAiServer(t.ws);
        speak(SENTENCE, t.file('s.wav'));
        speak('hello', t.file('short.wav'));
      });
      afterAll(async () => {
        await stt?.server.stop();
        await t?.close();
      });

      it('sends each chunk as 16 kHz mono WAV in verbose_json multipart and reads text, language and segments', async () => {
        const app = await transcriberApp({ STT_URL: stt.server.url, STT_API_KEY: KEY, STT_MODEL: 'whisper-large-v3' });
        try {
          fs.copyFileSync(t.file('s.wav'), app.file('s.wav'));
          fs.copyFileSync(t.file('short.wav'), app.file('short.wav'));
          const res = await app.call('transcribe_audio', { file_path: 's.wav', language: 'en' }).expect(200);
          const r = res.body.result;
          expect(r).toMatchObject({ engine: 'openai-compatible', model: 'whisper-large-v3', language: 'en', chunks: 1 });
          expect(wordErrorRate(SENTENCE, r.text)).toBeLessThan(WER_BOUND);
          expect(r.segments.length).toBeGreaterThan(0);
          expect(r.segments[0].text).toBe(r.segments[0].text.trim());
          expect(stt.seen.at(-1)).toEqual({
            model: 'whisper-large-v3',
            responseFormat: 'verbose_json',
            language: 'en',
            wav: { sampleRate: 16000, channels: 1 },
          });
          // A language the caller names is passed on (any language: the server decides what it knows) and answered.
          const fr = await app.call('transcribe_audio', { file_path: 'short.wav', language: 'fr' }).expect(200);
          expect(stt.seen.at(-1)?.language).toBe('fr');
          expect(fr.body.result.language).toBe('fr');
          // Without one, the server's language name ("english") is answered as its code.
          const auto = await app.call('transcribe_audio', { file_path: 'short.wav' }).expect(200);
          expect(stt.seen.at(-1)?.language).toBeUndefined();
          expect(auto.body.result.language).toBe('en');
        } finally {
          await app.close();
        }
      });

      it('joins chunks with their times shifted', async () => {
        const app = await transcriberApp({ STT_URL: `${stt.server.url}/v1`, STT_API_KEY: KEY, TRANSCRIBE_CHUNK_SECONDS: '5' });
        try {
          const wav = fs.readFileSync(t.file('s.wav'));
          // The sentence twice (about 8 s): two chunks.
          const data = wav.subarray(44);
          const twice = Buffer.concat([wav.subarray(0, 44), data, data]);
          twice.writeUInt32LE(data.length * 2, 40);
          twice.writeUInt32LE(36 + data.length * 2, 4);
          fs.writeFileSync(app.file('twice.wav'), twice);
          const before = stt.seen.length;
          const r = (await app.call('transcribe_audio', { file_path: 'twice.wav' }).expect(200)).body.result;
          expect(r.chunks).toBe(stt.seen.length - before);
          expect(r.chunks).toBeGreaterThanOrEqual(2);
          expect(wordErrorRate(`${SENTENCE} ${SENTENCE}`, r.text)).toBeLessThan(WER_BOUND);
          expect(r.segments.at(-1).start).toBeGreaterThan(3);
        } finally {
          await app.close();
        }
      });

      it('maps server errors: a wrong key and a 500 are UPSTREAM_ERROR, an unreachable server too', async () => {
        const envs: Record<string, string>[] = [
          { STT_URL: stt.server.url, STT_API_KEY: 'wrong' },
          { STT_URL: stt.server.url, STT_API_KEY: KEY, STT_MODEL: 'broken' },
          { STT_URL: 'http://127.0.0.1:9' },
        ];
        for (const env of envs) {
          const app = await transcriberApp(env);
          try {
            fs.copyFileSync(t.file('s.wav'), app.file('s.wav'));
            const res = await app.call('transcribe_audio', { file_path: 's.wav' }).expect(502);
            expect(res.body.code).toBe('UPSTREAM_ERROR');
            expect(res.body.error).not.toContain(KEY);
          } finally {
            await app.close();
          }
        }
      });
    });
  });
});
