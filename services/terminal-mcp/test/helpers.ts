import fs from 'node:fs';
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

/** Whether a process id is still alive (zombies excluded). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true;
  }
}

export async function waitUntil(test: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return test();
}
