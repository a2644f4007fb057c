import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import type { MarketplaceApp } from '../src/app';
import { binary, marketplace } from './shared';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let m: MarketplaceApp;
let skillsDir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ m, skillsDir, cleanup } = await marketplace());
});
afterAll(() => cleanup());

const download = (name: string, version: string) =>
  request(m.app).get(`/skills/v1/packages/${name}/${version}/download`).buffer(true).parse(binary);

describe('GET /skills/v1/index', () => {
  it('lists the sample catalog with latest = highest non-prerelease and a digest per version', async () => {
    const res = await request(m.app).get('/skills/v1/index').expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'marketplace-mcp' });
    const { skills, total } = res.body.result;
    expect(total).toBe(3);
    expect(skills.map((s: { name: string }) => s.name)).toEqual(['commit-message', 'fleet-health-check', 'sql-review']);
    const commit = skills[0];
    expect(commit.latest).toBe('1.1.0');
    expect(commit.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0-beta.1', '1.1.0', '1.0.0']);
    for (const v of commit.versions) {
      expect(v.sha256).toMatch(/^[a-f0-9]{64}$/);
      expect(v.tarball).toBe(`http://market.test:7034/skills/v1/packages/commit-message/${v.version}/download`);
    }
  });

  it('pages by name with a cursor, and searches names and descriptions', async () => {
    const first = await request(m.app).get('/skills/v1/index?limit=2').expect(200);
    expect(first.body.result.skills).toHaveLength(2);
    const second = await request(m.app).get(`/skills/v1/index?limit=2&cursor=${first.body.result.nextCursor}`).expect(200);
    expect(second.body.result.skills.map((s: { name: string }) => s.name)).toEqual(['sql-review']);
    expect(second.body.result.nextCursor).toBeUndefined();
    const found = await request(m.app).get('/skills/v1/index?search=postgresql').expect(200);
    expect(found.body.result.skills.map((s: { name: string }) => s.name)).toEqual(['sql-review']);
    const bad = await request(m.app).get('/skills/v1/index?cursor=garbage').expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect((await request(m.app).get('/skills/v1/index?limit=0').expect(400)).body.code).toBe('VALIDATION_ERROR');
  });
});

describe('GET /skills/v1/packages/{name}/{version}', () => {
  it('answers exact versions, latest, prereleases by name and npm ranges', async () => {
    const exact = await request(m.app).get('/skills/v1/packages/commit-message/1.0.0').expect(200);
    expect(exact.body.result).toMatchObject({ name: 'commit-message', version: '1.0.0', latest: false, license: 'MIT', source: 'catalog' });
    const latest = await request(m.app).get('/skills/v1/packages/commit-message/latest').expect(200);
    expect(latest.body.result).toMatchObject({ version: '1.1.0', latest: true });
    const pre = await request(m.app).get('/skills/v1/packages/commit-message/2.0.0-beta.1').expect(200);
    expect(pre.body.result.version).toBe('2.0.0-beta.1');
    const range = await request(m.app)
      .get(`/skills/v1/packages/commit-message/${encodeURIComponent('~1.0')}`)
      .expect(200);
    expect(range.body.result.version).toBe('1.0.0');
    const fleet = await request(m.app).get('/skills/v1/packages/fleet-health-check/1.0.0').expect(200);
    expect(fleet.body.result).toMatchObject({
      allowedTools: ['Bash(curl:*)', 'Read'],
      compatibility: expect.stringContaining('bash'),
      dist: { sha256: expect.stringMatching(/^[a-f0-9]{64}$/), fileCount: 2 },
    });
    expect(fleet.body.result.dist.integrity).toBe(`sha256-${Buffer.from(fleet.body.result.dist.sha256, 'hex').toString('base64')}`);
    expect(fleet.body.result.files).toEqual([
      expect.objectContaining({ path: 'SKILL.md', executable: false }),
      expect.objectContaining({ path: 'scripts/check.sh', executable: true }),
    ]);
  });

  it('answers NOT_FOUND for unknown names and unsatisfied ranges, VALIDATION_ERROR for a malformed range', async () => {
    expect((await request(m.app).get('/skills/v1/packages/no-such-skill/1.0.0').expect(404)).body.code).toBe('NOT_FOUND');
    const none = await request(m.app).get('/skills/v1/packages/commit-message/9.9.9').expect(404);
    expect(none.body.error).toMatch(/1\.1\.0/);
    expect(
      (
        await request(m.app)
          .get(`/skills/v1/packages/commit-message/${encodeURIComponent('>=3')}`)
          .expect(404)
      ).body.details.available,
    ).toHaveLength(3);
    expect((await request(m.app).get('/skills/v1/packages/commit-message/not%20a%20range!').expect(400)).body.code).toBe(
      'VALIDATION_ERROR',
    );
  });
});

describe('GET /skills/v1/packages/{name}/{version}/download', () => {
  it('sends the archive whose sha256 the index, the metadata and the headers all carry', async () => {
    const meta = (await request(m.app).get('/skills/v1/packages/fleet-health-check/1.0.0').expect(200)).body.result;
    const res = await download('fleet-health-check', '1.0.0').expect(200);
    const body = res.body as Buffer;
    expect(sha(body)).toBe(meta.dist.sha256);
    expect(body.length).toBe(meta.dist.size);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['x-checksum-sha256']).toBe(meta.dist.sha256);
    expect(res.headers['repr-digest']).toBe(`sha-256=:${Buffer.from(meta.dist.sha256, 'hex').toString('base64')}:`);
    expect(res.headers.etag).toBe(`"sha256-${meta.dist.sha256}"`);
    await request(m.app).get('/skills/v1/packages/fleet-health-check/1.0.0/download').set('If-None-Match', res.headers.etag).expect(304);
    expect((await request(m.app).get('/skills/v1/packages/fleet-health-check/7.0.0/download').expect(404)).body.code).toBe('NOT_FOUND');
  });

  describeWithProgram('tar', 'tar', 'the archive, read by GNU tar', () => {
    it('has sorted entries, fixed modes, times and owners, and unpacks to the skill folder', async () => {
      const body = (await download('fleet-health-check', '1.0.0').expect(200)).body as Buffer;
      const tmp = tempDir();
      try {
        fs.writeFileSync(path.join(tmp.dir, 'a.tgz'), body);
        const list = spawnSync('tar', ['--numeric-owner', '--full-time', '-tvzf', 'a.tgz'], {
          cwd: tmp.dir,
          encoding: 'utf8',
          env: { TZ: 'UTC' },
        });
        expect(list.status).toBe(0);
        const lines = list.stdout.trim().split('\n');
        expect(lines).toEqual([
          expect.stringMatching(/^-rw-r--r-- 0\/0 +\d+ 2000-01-01 00:00:00 SKILL\.md$/),
          expect.stringMatching(/^-rwxr-xr-x 0\/0 +\d+ 2000-01-01 00:00:00 scripts\/check\.sh$/),
        ]);
        fs.mkdirSync(path.join(tmp.dir, 'out'));
        expect(spawnSync('tar', ['-xzf', '../a.tgz'], { cwd: path.join(tmp.dir, 'out') }).status).toBe(0);
        expect(fs.readFileSync(path.join(tmp.dir, 'out', 'SKILL.md'))).toEqual(
          fs.readFileSync(path.join(skillsDir, 'fleet-health-check', 'SKILL.md')),
        );
      } finally {
        tmp.cleanup();
      }
    });
  });

  it('is reproducible: the same files give the same bytes whatever their times and non-exec modes', async () => {
    const before = (await download('sql-review', '0.3.0').expect(200)).body as Buffer;
    const other = await marketplace();
    try {
      const copy = path.join(other.skillsDir, 'sql-review');
      fs.utimesSync(path.join(copy, 'SKILL.md'), new Date('2011-01-01'), new Date('2011-01-01'));
      fs.chmodSync(path.join(copy, 'references', 'checklist.md'), 0o600);
      await other.m.catalog.reload();
      const again = (await request(other.m.app).get('/skills/v1/packages/sql-review/0.3.0/download').buffer(true).parse(binary).expect(200))
        .body as Buffer;
      expect(sha(again)).toBe(sha(before));
      fs.appendFileSync(path.join(copy, 'references', 'checklist.md'), '- one more\n');
      await other.m.catalog.reload();
      const changed = (await request(other.m.app).get('/skills/v1/packages/sql-review/0.3.0').expect(200)).body.result.dist.sha256;
      expect(changed).not.toBe(sha(before));
    } finally {
      await other.cleanup();
    }
  });
});

describe('POST /skills/v1/install-plan', () => {
  it('resolves ranges to versions, URLs, digests, files and verify steps; lists unknown and unsatisfiable names', async () => {
    const res = await request(m.app)
      .post('/skills/v1/install-plan')
      .send({
        skills: [
          'commit-message@^1.0',
          { name: 'fleet-health-check' },
          'ghost-skill',
          { name: 'sql-review', range: '^1' },
          'commit-message@=>bad',
        ],
        target: '/home/u/.claude/skills/',
      })
      .expect(200);
    const plan = res.body.result;
    expect(plan.target).toBe('/home/u/.claude/skills');
    expect(plan.complete).toBe(false);
    expect(plan.unknown).toEqual(['ghost-skill']);
    expect(plan.unsatisfiable).toEqual([
      // the second request for commit-message is answered too (install-plan-repeated-skill.test.ts)
      { name: 'commit-message', range: '=>bad', available: ['2.0.0-beta.1', '1.1.0', '1.0.0'], reason: 'not a semver version or range' },
      { name: 'sql-review', range: '^1', available: ['0.3.0'], reason: 'no version satisfies the range' },
    ]);
    expect(plan.install.map((i: { name: string; version: string }) => `${i.name}@${i.version}`)).toEqual([
      'commit-message@1.1.0',
      'fleet-health-check@1.0.0',
    ]);
    const fleet = plan.install[1];
    const meta = (await request(m.app).get('/skills/v1/packages/fleet-health-check/1.0.0').expect(200)).body.result;
    expect(fleet).toMatchObject({
      url: meta.dist.tarball,
      sha256: meta.dist.sha256,
      size: meta.dist.size,
      destination: '/home/u/.claude/skills/fleet-health-check',
      files: [
        expect.objectContaining({ path: '/home/u/.claude/skills/fleet-health-check/SKILL.md', mode: '0644' }),
        expect.objectContaining({ path: '/home/u/.claude/skills/fleet-health-check/scripts/check.sh', mode: '0755' }),
      ],
    });
    expect(fleet.verify.map((s: { step: string }) => s.step)).toEqual(['download', 'sha256', 'inspect', 'extract', 'skill-md']);
  });

  it("lists a malformed range instead of failing, defaults the folder to the client's, and refuses a bad body", async () => {
    const res = await request(m.app)
      .post('/skills/v1/install-plan')
      .send({ skills: ['sql-review@not-a-range!'], client: 'codex' })
      .expect(200);
    expect(res.body.result).toMatchObject({
      target: '.codex/skills',
      install: [],
      unsatisfiable: [{ name: 'sql-review', reason: 'not a semver version or range' }],
    });
    for (const body of [{}, { skills: [] }, { skills: ['x'], client: 'emacs' }, { skills: ['x'], extra: 1 }]) {
      const bad = await request(m.app).post('/skills/v1/install-plan').send(body).expect(400);
      expect(bad.body.code).toBe('VALIDATION_ERROR');
    }
    expect(
      (await request(m.app).post('/skills/v1/install-plan').set('content-type', 'application/json').send('{bad').expect(400)).body.code,
    ).toBe('VALIDATION_ERROR');
  });
});

describe('tools', () => {
  it('lists the five tools with described schemas, over /tools/list and MCP tools/list', async () => {
    const res = await request(m.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'catalog_validate',
      'registry_get_server',
      'registry_search',
      'skills_list',
      'skills_resolve',
    ]);
    for (const t of res.body.tools) {
      for (const [field, schema] of Object.entries(t.inputSchema.properties as Record<string, { description?: string }>)) {
        expect({ tool: t.name, field, described: Boolean(schema.description) }).toEqual({ tool: t.name, field, described: true });
      }
    }
  });

  it('skills_list and skills_resolve answer as their routes do', async () => {
    const list = await request(m.app).post('/tools/skills_list').send({ search: 'commit' }).expect(200);
    expect(list.body.result.skills.map((s: { name: string }) => s.name)).toEqual(['commit-message']);
    const one = await request(m.app).post('/tools/skills_resolve').send({ name: 'commit-message', version: '<1.1' }).expect(200);
    expect(one.body.result.version).toBe('1.0.0');
    expect((await request(m.app).post('/tools/skills_resolve').send({ name: 'commit-message', extra: true }).expect(400)).body.code).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('catalog_validate checks a SKILL.md text, and notices a skill folder that changed after it was packed', async () => {
    const ok = await request(m.app).post('/tools/catalog_validate').send({}).expect(200);
    expect(ok.body.result).toMatchObject({ valid: true, skills: 3, versionsChecked: 5, problems: [], mismatches: [] });
    const text = await request(m.app)
      .post('/tools/catalog_validate')
      .send({ skillMd: '---\nname: Bad_Name\ndescription: x\n---\n' })
      .expect(200);
    expect(text.body.result).toMatchObject({ valid: false, problems: [{ file: 'SKILL.md', field: 'name' }] });
    // requests compare the folder with the disk every MARKETPLACE_RESCAN_MS: here not within the test, so the drift is seen
    const other = await marketplace({ MARKETPLACE_RESCAN_MS: '3600000' });
    try {
      fs.appendFileSync(path.join(other.skillsDir, 'sql-review', 'SKILL.md'), '\nedited after load\n');
      const drift = await request(other.m.app).post('/tools/catalog_validate').send({ name: 'sql-review' }).expect(200);
      expect(drift.body.result).toMatchObject({ valid: false, versionsChecked: 1, mismatches: [{ file: 'sql-review', field: 'sha256' }] });
      const reloaded = await request(other.m.app).post('/tools/catalog_validate').send({ name: 'sql-review', reload: true }).expect(200);
      expect(reloaded.body.result).toMatchObject({ valid: true, mismatches: [] });
    } finally {
      await other.cleanup();
    }
  });
});

describe('POST /mcp (JSON-RPC)', () => {
  const rpc = (body: object) => request(m.app).post('/mcp').set('accept', 'application/json, text/event-stream').send(body);

  it('answers initialize, ping, tools/list and tools/call', async () => {
    const init = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }).expect(200);
    expect(init.body.result).toMatchObject({ serverInfo: { name: 'marketplace-mcp' }, capabilities: { tools: {} } });
    expect((await rpc({ jsonrpc: '2.0', id: 2, method: 'ping' }).expect(200)).body).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    const list = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/list' }).expect(200);
    expect(list.body.result.tools).toHaveLength(5);
    const call = await rpc({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'skills_resolve', arguments: { name: 'sql-review' } },
    }).expect(200);
    expect(call.body.result.structuredContent).toMatchObject({ name: 'sql-review', version: '0.3.0' });
    const miss = await rpc({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'skills_resolve', arguments: { name: 'ghost' } },
    }).expect(200);
    expect(miss.body.result.isError).toBe(true);
    expect(JSON.parse(miss.body.result.content[0].text).code).toBe('NOT_FOUND');
    const unknown = await rpc({ jsonrpc: '2.0', id: 6, method: 'no/such' }).expect(200);
    expect(unknown.body.error.code).toBe(-32601);
    await request(m.app).get('/mcp').expect(405);
  });
});
