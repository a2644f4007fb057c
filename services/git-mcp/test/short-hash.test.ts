/** Regression: git_commit answered shortHash with the full 40-character hash. */
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import type { ServiceApp } from '@mcp-fleet/kit';
import { buildApp, git, makeRepo, write } from './helpers';

describe('git_commit shortHash', () => {
  const ws = tempDir('git-short-hash-');
  let service: ServiceApp;
  let repo: string;

  beforeAll(async () => {
    repo = makeRepo(path.join(ws.dir, 'repo'));
    service = await buildApp(ws.dir);
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
  });

  it('is the abbreviated hash git itself shows, a prefix of the full hash', async () => {
    for (const [i, file] of ['a.txt', 'b.txt'].entries()) {
      write(path.join(repo, file), `${i}\n`);
      const res = await request(service.app)
        .post('/tools/call')
        .send({ name: 'git_commit', arguments: { repository: 'repo', message: `add ${file}`, files: [file] } })
        .expect(200);
      const { hash, shortHash } = res.body.result as { hash: string; shortHash: string };
      expect(hash).toMatch(/^[0-9a-f]{40}$/);
      expect(shortHash).toBe(git(repo, 'rev-parse', '--short', 'HEAD').trim());
      expect(shortHash.length).toBeLessThan(hash.length);
      expect(hash.startsWith(shortHash)).toBe(true);
    }
  });
});
