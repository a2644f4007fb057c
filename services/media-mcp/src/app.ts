import fs from 'node:fs/promises';
import path from 'node:path';
import { createServiceApp, type HealthCheck, type Logger, type ServiceApp, secretFilesFrom } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { OutboundClient, OutboundPolicy } from '@mcp-fleet/outbound';
import { SERVICE_ID, type Config } from './config';
import type { MediaDeps } from './deps';
import { JobRunner, JobStore } from './jobs';
import { AvEngines, type EngineInfo } from './media/engines';
import { sharpStatus } from './media/image';
import { Sandbox, sandboxHealth } from '@mcp-fleet/sandbox';
import { outputFolder } from './media/output';
import { createTools } from './tools';

export interface AppDeps {
  config: Config;
  logger: Logger;
  /** Process-level default metrics (tests that build several apps turn them off). */
  defaultMetrics?: boolean;
  /** Tests point the outbound policy at a local server. */
  policy?: OutboundPolicy;
}

/** An engine's health; a missing one is looked for again (throttled), so an install shows without a restart. */
const engineCheck = (engines: AvEngines, name: 'ffmpeg' | 'ffprobe'): HealthCheck => ({
  name,
  required: false,
  check: async () => {
    await engines.refresh();
    const info: EngineInfo = engines[name];
    if (!info.available)
      throw new Error(`${info.program} is not installed (apt-get install ffmpeg): audio and video tools answer NOT_CONFIGURED`);
    return { program: info.program, version: info.version };
  },
});

/** Builds the app; never listens (server.ts does). */
export async function createApp({ config, logger, defaultMetrics = true, policy }: AppDeps): Promise<ServiceApp> {
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const dataDir = path.join(config.DATA_DIR, SERVICE_ID);
  const scratchDir = path.join(dataDir, 'scratch');
  // Scratch copies of URL and base64 input from a previous process are never needed again.
  await fs.rm(scratchDir, { recursive: true, force: true });
  const sandbox = Sandbox.open(config, logger);
  const programs = { ffmpeg: config.FFMPEG_PATH, ffprobe: config.FFPROBE_PATH };
  const engines = await AvEngines.detect(programs, sandbox);
  if (!engines.ffmpeg.available || !engines.ffprobe.available) {
    logger.warn('ffmpeg/ffprobe missing: images work, audio and video answer NOT_CONFIGURED (apt-get install ffmpeg)', {
      ffmpeg: engines.ffmpeg.error,
      ffprobe: engines.ffprobe.error,
    });
  }
  await fs.mkdir(scratchDir, { recursive: true });
  const db = await SqliteDb.open(path.join(dataDir, 'jobs.sqlite'));
  const store = await JobStore.open(db, logger);
  const runner = new JobRunner(store, {
    concurrency: config.MEDIA_JOB_CONCURRENCY,
    queueMax: config.MEDIA_JOB_QUEUE_MAX,
    timeoutMs: config.MEDIA_JOB_TIMEOUT_MS,
    logger,
  });
  const outbound = new OutboundClient({ policy: policy ?? OutboundPolicy.fromConfig(config), logger, userAgent: `${SERVICE_ID}/0.1` });
  const deps: MediaDeps = {
    config,
    logger,
    ws,
    engines,
    programs: { ...programs, confinement: { sandbox, readOnly: [...ws.roots, scratchDir] } },
    runner,
    outputDir: await outputFolder(ws, config.MEDIA_OUTPUT_DIR),
    input: {
      ws,
      outbound,
      scratchDir,
      limits: {
        maxInputBytes: config.MEDIA_MAX_INPUT_BYTES,
        maxUrlBytes: config.MEDIA_MAX_URL_BYTES,
        maxBase64Bytes: config.MEDIA_MAX_BASE64_BYTES,
        urlTimeoutMs: config.MEDIA_URL_TIMEOUT_MS,
      },
    },
  };
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    defaultMetrics,
    healthChecks: [
      { name: 'sharp', required: true, check: sharpStatus },
      engineCheck(engines, 'ffmpeg'),
      engineCheck(engines, 'ffprobe'),
      { name: 'sandbox', required: false, check: () => sandboxHealth(sandbox) },
      { name: 'jobs', required: true, check: async () => ({ running: runner.active, queued: runner.waiting, store: db.file }) },
    ],
    onClose: async () => {
      await runner.close();
      await outbound.close();
      await db.close();
    },
  });
}
