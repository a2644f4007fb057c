import fs from 'node:fs';
import path from 'node:path';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

export interface Fixture {
  /** First workspace root. */
  rootA: string;
  /** Second workspace root. */
  rootB: string;
  /** A directory outside both roots, with a "secret.txt" that must never be reachable. */
  outside: string;
  service: ServiceApp;
  cleanup(): Promise<void>;
}

/** Two roots and an outside directory, real files on disk; env overrides the caps under test. */
export async function makeFixture(env: Record<string, string> = {}): Promise<Fixture> {
  const a = tempDir('fsmcp-a-');
  const b = tempDir('fsmcp-b-');
  const o = tempDir('fsmcp-outside-');
  fs.writeFileSync(path.join(o.dir, 'secret.txt'), 'TOP SECRET\n');
  const config = configSchema.parse({ ...testConfig, WORKSPACE_ROOTS: `${a.dir},${b.dir}`, ...env });
  const service = await createApp({ config, logger: testLogger(), defaultMetrics: false });
  return {
    rootA: a.dir,
    rootB: b.dir,
    outside: o.dir,
    service,
    cleanup: async () => {
      await service.close();
      a.cleanup();
      b.cleanup();
      o.cleanup();
    },
  };
}

/** Write files relative to a directory: {"x/y.txt": "content"}. */
export function writeTree(base: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(base, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}
