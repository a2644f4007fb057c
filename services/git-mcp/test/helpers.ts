import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

/** Runs the real git for test setup (hooks and all: this is the test's own hand, not the service). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** A repository with local identity and one commit of README.md. */
export function makeRepo(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test User');
  git(dir, 'config', 'user.email', 'test@example.com');
  write(path.join(dir, 'README.md'), '# readme\n');
  git(dir, 'add', 'README.md');
  git(dir, 'commit', '-q', '-m', 'initial commit');
  return dir;
}

/** The shared test settings as the string environment readConfig takes. */
export function testEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...Object.fromEntries(Object.entries(testConfig).map(([k, v]) => [k, String(v)])), ...extra };
}

export async function buildApp(root: string, extra: Record<string, string> = {}) {
  const config = readConfig(
    testEnv({
      TOOL_TIMEOUT_MS: '20000',
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WORKSPACE_ROOTS: root,
      GIT_TIMEOUT_MS: '15000',
      ...extra,
    }),
  );
  return createApp({ config, logger: testLogger('git-mcp') });
}
