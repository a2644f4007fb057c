import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { OutboundPolicy } from '@mcp-fleet/outbound';
import { tempDir, testEnv, testLogger } from '@mcp-fleet/testing';
import request from 'supertest';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

/** Runs a program; throws with its stderr on failure. */
export function runOk(program: string, args: string[]): void {
  const res = spawnSync(program, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${program} ${args.join(' ')}: ${res.stderr}`);
}

/**
 * Speaks `text` with espeak-ng into a WAV file. The Klatt voice at 140 words/minute is the one the
 * en-us pocketsphinx model recognises best of those compared (docs/services/transcriber-mcp.md).
 */
export function speak(text: string, file: string): void {
  runOk('espeak-ng', ['-v', 'en-us+klatt', '-s', '140', '-w', file, text]);
}

export function ffmpeg(...args: string[]): void {
  runOk('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
}

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word error rate: word-level Levenshtein distance (substitutions + insertions + deletions) / reference words. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const r = words(reference);
  const h = words(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const cur = [i];
    for (let j = 1; j <= h.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return r.length ? prev[h.length] / r.length : h.length ? 1 : 0;
}

/** A transcriber-mcp app on a fresh workspace and data directory; `close()` removes both. */
export async function transcriberApp(env: Record<string, string> = {}, policy?: OutboundPolicy) {
  const ws = tempDir('transcriber-ws-');
  const data = tempDir('transcriber-data-');
  const config = readConfig(testEnv({ WORKSPACE_ROOTS: ws.dir, DATA_DIR: data.dir, TOOL_TIMEOUT_MS: '60000', BODY_LIMIT: '16mb', ...env }));
  const svc = await createApp({ config, logger: testLogger(), defaultMetrics: false, policy });
  return {
    svc,
    ws: ws.dir,
    file: (rel: string) => path.join(ws.dir, rel),
    call: (tool: string, args: Record<string, unknown>) => request(svc.app).post(`/tools/${tool}`).send(args),
    close: async () => {
      await svc.close();
      ws.cleanup();
      data.cleanup();
    },
  };
}
