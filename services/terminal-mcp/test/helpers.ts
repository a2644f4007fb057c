import { execFileSync } from 'node:child_process';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

/** The shared test settings as the string environment readConfig takes. */
export function testEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...Object.fromEntries(Object.entries(testConfig).map(([k, v]) => [k, String(v)])), ...extra };
}

export async function buildApp(root: string, extra: Record<string, string | undefined> = {}) {
  const config = readConfig(
    testEnv({ PATH: process.env.PATH, HOME: process.env.HOME, WORKSPACE_ROOTS: root, TERMINAL_TIMEOUT_MS: '8000', ...extra }),
  );
  return createApp({ config, logger: testLogger('terminal-mcp') });
}

/** Host processes whose command line starts with `prefix` (ids inside a sandbox mean nothing outside it). */
export function running(prefix: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith(prefix));
}

export async function waitUntil(test: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return test();
}
