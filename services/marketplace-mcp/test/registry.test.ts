import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import request from 'supertest';
import type { MarketplaceApp } from '../src/app';
import { marketplace } from './shared';
import schemas from './fixtures/registry-v0.1-schemas.json';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(schemas, 'registry');
const serverList = ajv.getSchema('registry#/$defs/ServerList')!;
const serverResponse = ajv.getSchema('registry#/$defs/ServerResponse')!;
const conforms = (validate: typeof serverList, body: unknown) => {
  validate(body);
  return validate.errors ?? [];
};

const OFFICIAL = 'io.modelcontextprotocol.registry/official';
let m: MarketplaceApp;
let dir: string;
let cleanup: () => Promise<void>;
const registryFile = () => path.join(dir, 'registry.json');

beforeAll(async () => {
  const tmp = await marketplace({ MARKETPLACE_REGISTRY_FILE: '/dev/null' });
  dir = tmp.dir;
  await tmp.cleanup();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    registryFile(),
    JSON.stringify([
      ...['1.0.0', '1.2.0', '2.0.0-rc.1'].map((version) => ({
        name: 'com.example/weather',
        description: `Weather ${version}`,
        version,
        repository: { url: 'https://github.com/example/weather', source: 'github' },
        packages: [{ registryType: 'npm', identifier: '@example/weather', version, transport: { type: 'stdio' } }],
      })),
      {
        server: {
          name: 'com.example/old',
          description: 'Deprecated one',
          version: '0.9.0',
          remotes: [{ type: 'sse', url: 'https://old.example.com/sse' }],
        },
        _meta: {
          [OFFICIAL]: { status: 'deprecated', publishedAt: '2024-01-01T00:00:00Z', updatedAt: '2024-06-01T00:00:00Z', isLatest: false },
        },
      },
      { name: 'not reverse dns', description: 'bad', version: '1.0.0' },
      { name: 'com.example/ranged', description: 'bad', version: '^1.0.0' },
      { name: 'com.example/long', description: 'x'.repeat(101), version: '1.0.0' },
    ]),
  );
  fs.utimesSync(registryFile(), new Date('2025-03-01T00:00:00Z'), new Date('2025-03-01T00:00:00Z'));
  ({ m, cleanup } = await marketplace({ MARKETPLACE_REGISTRY_FILE: registryFile() }));
});
afterAll(() => cleanup());

async function allPages(query: string, limit: number) {
  const seen: { name: string; version: string }[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const res = await request(m.app)
      .get(`/registry/v0.1/servers?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      .expect(200);
    expect(conforms(serverList, res.body)).toEqual([]);
    expect(res.body.metadata.count).toBe(res.body.servers.length);
    seen.push(
      ...res.body.servers.map((s: { server: { name: string; version: string } }) => ({ name: s.server.name, version: s.server.version })),
    );
    cursor = res.body.metadata.nextCursor;
    if (!cursor) break;
  }
  return seen;
}

describe('GET /registry/v0.1/servers (official MCP Registry API v0.1)', () => {
  it("lists the fleet's services and the file's entries, every page valid against the official ServerList", async () => {
    const all = await allPages('', 7);
    const names = all.map((e) => e.name);
    expect(names).toContain('io.mcp-fleet/memory-mcp');
    expect(names).toContain('io.mcp-fleet/marketplace-mcp');
    expect(
      all
        .filter((e) => e.name === 'com.example/weather')
        .map((e) => e.version)
        .sort(),
    ).toEqual(['1.0.0', '1.2.0', '2.0.0-rc.1']);
    expect(new Set(all.map((e) => `${e.name}@${e.version}`)).size).toBe(all.length);
    expect(names).not.toContain('com.example/ranged');
  });

  it("gives each fleet service the gateway's MCP URL as a streamable-http remote and its own URL", async () => {
    const res = await request(m.app).get('/registry/v0.1/servers/io.mcp-fleet%2Fmarketplace-mcp').expect(200);
    expect(conforms(serverResponse, res.body)).toEqual([]);
    expect(res.body.server.remotes).toEqual([
      { type: 'streamable-http', url: 'http://127.0.0.1:7000/mcp' },
      { type: 'streamable-http', url: 'http://127.0.0.1:7034/mcp' },
    ]);
    expect(res.body.server._meta['io.modelcontextprotocol.registry/publisher-provided']).toMatchObject({
      serviceUrl: 'http://127.0.0.1:7034',
    });
    expect(res.body._meta[OFFICIAL]).toEqual({
      status: 'active',
      publishedAt: expect.any(String),
      updatedAt: expect.any(String),
      isLatest: true,
    });
  });

  it('filters by search, version=latest and updated_since, and refuses bad parameters', async () => {
    const search = await request(m.app).get('/registry/v0.1/servers?search=WEATHER').expect(200);
    expect(search.body.servers.map((s: { server: { version: string } }) => s.server.version)).toEqual(['1.0.0', '1.2.0', '2.0.0-rc.1']);
    const latest = await request(m.app).get('/registry/v0.1/servers?search=weather&version=latest').expect(200);
    expect(latest.body.servers.map((s: { server: { version: string } }) => s.server.version)).toEqual(['1.2.0']);
    const since = await request(m.app).get('/registry/v0.1/servers?updated_since=2024-07-01T00:00:00Z&search=example').expect(200);
    expect(since.body.servers.map((s: { server: { name: string } }) => s.server.name)).not.toContain('com.example/old');
    expect(since.body.servers.length).toBe(3);
    const before = await request(m.app).get('/registry/v0.1/servers?updated_since=2024-01-01T00:00:00Z&search=old').expect(200);
    expect(before.body.servers).toHaveLength(1);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'updated_since=yesterday', 'cursor=nope', 'bogus=1']) {
      const bad = await request(m.app).get(`/registry/v0.1/servers?${q}`).expect(400);
      expect({ q, code: bad.body.code, error: typeof bad.body.error }).toEqual({ q, code: 'VALIDATION_ERROR', error: 'string' });
    }
  });

  it('answers one server, its versions newest first, its latest and one version; 404 otherwise', async () => {
    const versions = await request(m.app).get('/registry/v0.1/servers/com.example%2Fweather/versions').expect(200);
    expect(conforms(serverList, versions.body)).toEqual([]);
    expect(
      versions.body.servers.map((s: { server: { version: string }; _meta: Record<string, { isLatest: boolean }> }) => [
        s.server.version,
        s._meta[OFFICIAL].isLatest,
      ]),
    ).toEqual([
      ['2.0.0-rc.1', false],
      ['1.2.0', true],
      ['1.0.0', false],
    ]);
    for (const p of ['com.example%2Fweather', 'com.example%2Fweather/latest', 'com.example/weather/latest']) {
      const res = await request(m.app).get(`/registry/v0.1/servers/${p}`).expect(200);
      expect(conforms(serverResponse, res.body)).toEqual([]);
      expect(res.body.server.version).toBe('1.2.0');
    }
    const one = await request(m.app).get('/registry/v0.1/servers/com.example%2Fweather/versions/1.0.0').expect(200);
    expect(one.body._meta[OFFICIAL].isLatest).toBe(false);
    const old = await request(m.app).get('/registry/v0.1/servers/com.example%2Fold').expect(200);
    expect(old.body._meta[OFFICIAL]).toEqual({
      status: 'deprecated',
      publishedAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-06-01T00:00:00.000Z',
      isLatest: true,
    });
    expect((await request(m.app).get('/registry/v0.1/servers/com.example%2Fnone').expect(404)).body.code).toBe('NOT_FOUND');
    expect((await request(m.app).get('/registry/v0.1/servers/com.example%2Fweather/versions/9.9.9').expect(404)).body.code).toBe(
      'NOT_FOUND',
    );
  });

  it('names each refused file entry with its field, and registry_search / registry_get_server serve the same data', async () => {
    expect(m.registry.problems.map((p) => p.field)).toEqual(expect.arrayContaining(['name', 'version', 'description']));
    const route = await request(m.app).get('/registry/v0.1/servers?search=weather').expect(200);
    const tool = await request(m.app).post('/tools/registry_search').send({ search: 'weather' }).expect(200);
    expect(tool.body.result).toEqual(route.body);
    const get = await request(m.app).post('/tools/registry_get_server').send({ name: 'com.example/weather' }).expect(200);
    expect(get.body.result).toEqual((await request(m.app).get('/registry/v0.1/servers/com.example%2Fweather').expect(200)).body);
    const all = await request(m.app)
      .post('/tools/registry_get_server')
      .send({ name: 'com.example/weather', allVersions: true })
      .expect(200);
    expect(all.body.result.metadata.count).toBe(3);
    expect((await request(m.app).post('/tools/registry_get_server').send({ name: 'com.example/x' }).expect(404)).body.code).toBe(
      'NOT_FOUND',
    );
    const report = await request(m.app).post('/tools/catalog_validate').send({}).expect(200);
    expect(report.body.result.registryProblems.length).toBeGreaterThanOrEqual(3);
  });

  it.each([
    ['the sample registry file', undefined, 2],
    ['the official publish examples', path.join(__dirname, 'fixtures', 'official-examples.json'), 2],
  ])('loads %s without a problem and serves it back valid', async (_title, file, count) => {
    const { m: other, cleanup: done } = await marketplace(file ? { MARKETPLACE_REGISTRY_FILE: file } : {});
    try {
      expect(other.registry.problems).toEqual([]);
      const res = await request(other.app).get('/registry/v0.1/servers?limit=100').expect(200);
      const external = res.body.servers.filter((s: { server: { name: string } }) => !s.server.name.startsWith('io.mcp-fleet/'));
      expect(external).toHaveLength(count);
      expect(conforms(serverList, res.body)).toEqual([]);
      if (file) expect(external[0].server._meta['com.example']).toMatchObject({ verifiedPublisher: true });
    } finally {
      await done();
    }
  });
});
