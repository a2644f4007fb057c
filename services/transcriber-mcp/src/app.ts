import fs from 'node:fs/promises';
import path from 'node:path';
import {
  abortOnClose,
  AppError,
  createServiceApp,
  successEnvelope,
  type KitHandle,
  type Logger,
  type ServiceApp,
  secretFilesFrom,
} from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { OutboundClient, OutboundPolicy } from '@mcp-fleet/outbound';
import type { Express, NextFunction, Request, Response } from 'express';
import multer from 'multer';
import { SERVICE_ID, type Config } from './config';
import type { TranscriberDeps } from './deps';
import { openAiEngine } from './engines/openai';
import { pocketsphinxEngine } from './engines/pocketsphinx';
import { probeProgram } from './engines/run';
import { Sandbox, sandboxHealth, type Confinement } from '@mcp-fleet/sandbox';
import type { Engine } from './engines/types';
import { createTools } from './tools';

export interface AppDeps {
  config: Config;
  logger: Logger;
  /** Process-level default metrics (tests that build several apps turn them off). */
  defaultMetrics?: boolean;
  /** Tests point the outbound policy at a local server. */
  policy?: OutboundPolicy;
}

/** The engine the configuration selects: STT_URL set means the OpenAI-compatible server. */
export function selectEngine(config: Config, confinement: Confinement): Engine {
  return config.STT_URL
    ? openAiEngine({ url: config.STT_URL, apiKey: config.STT_API_KEY, model: config.STT_MODEL })
    : pocketsphinxEngine(config.POCKETSPHINX_PATH, config.POCKETSPHINX_MODEL_DIR, confinement);
}

const multerErrors: Record<string, AppError['code']> = { LIMIT_FILE_SIZE: 'PAYLOAD_TOO_LARGE', LIMIT_FIELD_VALUE: 'PAYLOAD_TOO_LARGE' };

/**
 * POST /transcribe/audio as multipart/form-data: one "file" part (multer, in memory, capped at
 * TRANSCRIBE_MAX_UPLOAD_BYTES) and an optional "language" field, run through transcribe_audio.
 * JSON bodies fall through to the tool route.
 */
function registerUpload(app: Express, kit: KitHandle, config: Config): void {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: config.TRANSCRIBE_MAX_UPLOAD_BYTES, files: 1, fields: 4, fieldSize: 1024, parts: 5 },
  }).single('file');
  app.post('/transcribe/audio', (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return next();
    upload(req, res, (err: unknown) => {
      void (async () => {
        try {
          if (err) {
            const code = err instanceof multer.MulterError ? (multerErrors[err.code] ?? 'VALIDATION_ERROR') : 'VALIDATION_ERROR';
            throw new AppError(
              code,
              `The multipart upload was refused: ${(err as Error).message} (one "file" part of at most ${config.TRANSCRIBE_MAX_UPLOAD_BYTES} bytes, optional "language").`,
            );
          }
          if (!req.file) {
            throw new AppError('VALIDATION_ERROR', 'The multipart upload has no "file" part; send the audio as a part named file.', {
              details: [{ path: 'file', message: 'missing' }],
            });
          }
          const fields = (req.body ?? {}) as Record<string, unknown>;
          const args = {
            audio_base64: req.file.buffer.toString('base64'),
            ...(typeof fields.language === 'string' ? { language: fields.language } : {}),
          };
          const result = await kit.callTool('transcribe_audio', args, {
            requestId: res.locals.requestId as string,
            signal: abortOnClose(res),
            logger: res.locals.logger as Logger,
          });
          res.json(successEnvelope(SERVICE_ID, result));
        } catch (e) {
          kit.sendError(res, e);
        }
      })();
    });
  });
}

/** Builds the app; never listens (server.ts does). */
export async function createApp({ config, logger, defaultMetrics = true, policy }: AppDeps): Promise<ServiceApp> {
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const scratchDir = path.join(config.DATA_DIR, SERVICE_ID, 'scratch');
  // Scratch copies from a previous process are never needed again.
  await fs.rm(scratchDir, { recursive: true, force: true });
  await fs.mkdir(scratchDir, { recursive: true, mode: 0o700 });
  // Every program runs in the OS sandbox: it reads the roots and the scratch folder, nothing else of the host.
  const sandbox = Sandbox.open(config, logger);
  const confinement: Confinement = { sandbox, readOnly: [...ws.roots, scratchDir] };
  const engine = selectEngine(config, confinement);
  const probeFfmpeg = () => probeProgram(config.FFMPEG_PATH, ['-hide_banner', '-version'], 'ffmpeg', confinement);
  let ffmpeg = await probeFfmpeg();
  let ffmpegProbedAt = Date.now();
  if (!ffmpeg.ok) logger.warn('ffmpeg missing: transcriptions answer NOT_CONFIGURED (apt-get install ffmpeg)', { error: ffmpeg.detail });
  const outbound = new OutboundClient({ policy: policy ?? OutboundPolicy.fromConfig(config), logger, userAgent: `${SERVICE_ID}/0.1` });
  const deps: TranscriberDeps = {
    config,
    logger,
    input: {
      ws,
      outbound,
      scratchDir,
      maxUploadBytes: config.TRANSCRIBE_MAX_UPLOAD_BYTES,
      maxUrlBytes: config.TRANSCRIBE_MAX_URL_BYTES,
      urlTimeoutMs: config.TRANSCRIBE_URL_TIMEOUT_MS,
    },
    transcriber: {
      engine,
      ffmpeg: config.FFMPEG_PATH,
      confinement,
      scratchDir,
      chunkSeconds: config.TRANSCRIBE_CHUNK_SECONDS,
      maxSeconds: config.TRANSCRIBE_MAX_SECONDS,
    },
  };
  const engineReady = async () =>
    engine.ready().then(
      () => ({ ready: true }),
      (err: Error) => ({ ready: false, problem: err.message }),
    );
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    defaultMetrics,
    healthChecks: [
      {
        name: 'ffmpeg',
        required: false,
        check: async () => {
          // Installed since the last look? (every few seconds at most; calls find it by running it)
          if (!ffmpeg.ok && Date.now() - ffmpegProbedAt >= 5000) {
            ffmpegProbedAt = Date.now();
            ffmpeg = await probeFfmpeg();
          }
          if (!ffmpeg.ok)
            throw new Error(`${config.FFMPEG_PATH} is not installed (apt-get install ffmpeg): transcriptions answer NOT_CONFIGURED`);
          return { program: config.FFMPEG_PATH, version: ffmpeg.detail };
        },
      },
      { name: engine.name, required: false, check: () => engine.health() },
      { name: 'sandbox', required: false, check: () => sandboxHealth(sandbox) },
    ],
    extend: (app, kit) => {
      app.get('/', (_req, res) => {
        void engineReady().then((state) =>
          res.json({
            service: SERVICE_ID,
            status: state.ready && ffmpeg.ok ? 'ok' : 'degraded',
            engine: engine.name,
            model: engine.model,
            languages: engine.languages,
            ...state,
            ffmpeg: ffmpeg.ok ? ffmpeg.detail : `missing: apt-get install ffmpeg`,
            chunk_seconds: config.TRANSCRIBE_CHUNK_SECONDS,
            max_upload_bytes: config.TRANSCRIBE_MAX_UPLOAD_BYTES,
            routes: ['POST /transcribe/audio', 'POST /transcribe/url', 'POST /tools/{tool}', 'GET /tools/list'],
          }),
        );
      });
      registerUpload(app, kit, config);
    },
    routes: (r) => {
      r.tool('post', '/transcribe/audio', 'transcribe_audio');
      r.tool('post', '/transcribe/url', 'transcribe_url');
    },
    onClose: async () => {
      await outbound.close();
    },
  });
}
