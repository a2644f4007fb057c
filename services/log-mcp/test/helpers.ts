import fs from 'node:fs';
import path from 'node:path';
import { createLogger, type Logger } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

/** A log-mcp app whose DATA_DIR is a fresh temp dir; by default it reads DATA_DIR/logs like the fleet. */
export function makeApp(env: Record<string, string> = {}) {
  const tmp = tempDir('log-mcp-');
  const dataDir = path.join(tmp.dir, 'data');
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const config = configSchema.parse({ ...testConfig, DATA_DIR: dataDir, LOG_REGEX_TIMEOUT_MS: '300', ...env });
  const service = createApp({ config, logger: testLogger() });
  return {
    app: service.app,
    tmp: tmp.dir,
    logDir,
    write(rel: string, lines: string[]) {
      const file = path.join(logDir, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
      return file;
    },
    close: async () => {
      await service.close();
      tmp.cleanup();
    },
  };
}

/** The fleet's own logger (kit createLogger) writing `<service>.log` the way the launcher does, console off. */
export function fleetLogger(service: string, file: string): Logger {
  const logger = createLogger({ service, level: 'debug', file });
  for (const t of [...logger.transports]) if (t.constructor.name === 'Console') logger.remove(t);
  return logger;
}

/** Waits until the file holds `lines` lines (winston's file transport writes asynchronously). */
export async function waitForLines(file: string, lines: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text.split('\n').filter(Boolean).length >= lines) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${file} never reached ${lines} lines`);
}

/** One winston-format JSON line (what createLogger writes), with a chosen timestamp. */
export function jsonLine(
  timestamp: Date,
  level: string,
  message: string,
  extra: Record<string, unknown> = {},
  service = 'api-mcp',
): string {
  return JSON.stringify({ level, message, service, ...extra, timestamp: timestamp.toISOString() });
}
