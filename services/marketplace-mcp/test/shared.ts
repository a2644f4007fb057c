import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Response } from 'supertest';
import tar from 'tar-stream';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp, type AppDeps, type MarketplaceApp } from '../src/app';
import { configSchema, SAMPLE_SKILLS_DIR, type Config } from '../src/config';

/** A marketplace over a scratch copy of the sample catalog (so tests may change it) and its own DATA_DIR. */
export async function marketplace(
  env: Record<string, string> = {},
  deps: Pick<AppDeps, 'skillsPageSize'> = {},
): Promise<{ m: MarketplaceApp; dir: string; skillsDir: string; cleanup: () => Promise<void> }> {
  const tmp = tempDir('marketplace-');
  const skillsDir = path.join(tmp.dir, 'skills');
  fs.cpSync(SAMPLE_SKILLS_DIR, skillsDir, { recursive: true });
  const config: Config = configSchema.parse({
    ...testConfig,
    DATA_DIR: path.join(tmp.dir, 'data'),
    MARKETPLACE_SKILLS_DIR: skillsDir,
    MARKETPLACE_PUBLIC_URL: 'http://market.test:7034',
    ...env,
  });
  const m = createApp({ config, logger: testLogger(), defaultMetrics: false, ...deps });
  await m.ready;
  return {
    m,
    dir: tmp.dir,
    skillsDir,
    cleanup: async () => {
      await m.close();
      tmp.cleanup();
    },
  };
}

/** supertest parser that keeps a binary body as a Buffer. */
export function binary(res: Response, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  (res as unknown as NodeJS.ReadableStream).on('data', (c: Buffer) => chunks.push(c));
  (res as unknown as NodeJS.ReadableStream).on('end', () => cb(null, Buffer.concat(chunks)));
}

export interface RawEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo';
  data?: string;
  linkname?: string;
  mode?: number;
}

/** A tar.gz with exactly these entries, hostile ones included (tar-stream writes real ustar headers). */
export async function rawArchive(entries: RawEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve) => {
    pack.on('data', (c) => chunks.push(c as Buffer));
    pack.on('end', () => resolve());
  });
  for (const e of entries) {
    const type = e.type ?? 'file';
    const data = type === 'file' ? Buffer.from(e.data ?? '') : undefined;
    const header = { name: e.name, type, mode: e.mode ?? 0o644, linkname: e.linkname, devmajor: 1, devminor: 3, mtime: new Date(0) };
    if (data) pack.entry({ ...header, size: data.length }, data);
    else pack.entry(header);
  }
  pack.finalize();
  await done;
  return zlib.gzipSync(Buffer.concat(chunks));
}

export const skillMd = (name: string, version: string, extra = '') =>
  `---\nname: ${name}\ndescription: A test skill called ${name}.\nmetadata:\n  version: ${version}\n${extra}---\n\n# ${name}\n\nBody of ${name} ${version}.\n`;
