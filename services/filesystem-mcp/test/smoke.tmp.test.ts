import request from 'supertest';
import fs from 'node:fs';
import { testConfig, testLogger, tempDir } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

it('smoke', async () => {
  const { dir, cleanup } = tempDir();
  fs.writeFileSync(`${dir}/a.txt`, 'hello\nworld\n');
  fs.mkdirSync(`${dir}/sub`);
  fs.writeFileSync(`${dir}/sub/b.ts`, 'const x = 1;\n');
  const config = configSchema.parse({ ...testConfig, WORKSPACE_ROOTS: dir });
  const { app } = await createApp({ config, logger: testLogger(), defaultMetrics: false });
  for (const p of ['/files', '/files/', '/files/sub', '/file/a.txt', `/file//${dir.slice(1)}/a.txt`, '/file/%2e%2e/etc/passwd', '/file/../etc/passwd', '/file/a%00b', '/file/%zz', '/analyze', '/analyze/sub/b.ts', '/search/files?name=*.ts', '/search/files?content=WORLD', '/search/files']) {
    const res = await request(app).get(p);
    console.log(p, res.status, JSON.stringify(res.body).slice(0, 400));
  }
  cleanup();
});
