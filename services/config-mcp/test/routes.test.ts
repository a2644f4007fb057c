import request from 'supertest';
import { readConfig } from '../src/config';
import { makeApp } from './helpers';

const h = makeApp();
afterAll(() => h.close());

describe('config-mcp service surface', () => {
  it('lists its four tools with zod-generated schemas, caps in descriptions and annotations', async () => {
    const res = await request(h.app).get('/tools/list').expect(200);
    const tools = res.body.tools as {
      name: string;
      description: string;
      inputSchema: { properties: Record<string, unknown> };
      annotations: Record<string, boolean>;
    }[];
    expect(tools.map((t) => t.name).sort()).toEqual(['backup', 'config_file', 'env_vars', 'validate']);
    for (const t of tools) {
      expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(t.annotations).toHaveProperty('readOnlyHint');
      expect(t.description).toMatch(/\d/);
    }
    const backup = tools.find((t) => t.name === 'backup')!;
    expect(backup.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(backup.inputSchema.properties.action).toMatchObject({ enum: ['create', 'list', 'restore', 'prune'] });
  });

  it('serves health with workspace and backup checks, and tools through /tools/call', async () => {
    const health = await request(h.app).get('/health').expect(200);
    expect(health.body).toMatchObject({
      status: 'healthy',
      service: 'config-mcp',
      tools: 4,
      checks: { workspace: { status: 'ok' }, backups: { status: 'ok' } },
    });
    const res = await request(h.app)
      .post('/tools/call')
      .send({ name: 'config_file', arguments: { action: 'read', content: 'a: 1', from: 'yaml' } })
      .expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'config-mcp', result: { data: { a: 1 } } });
  });

  it('answers unknown tools, non-JSON bodies and wrong argument types without a 500', async () => {
    expect((await request(h.app).post('/tools/nope').send({}).expect(404)).body.code).toBe('UNKNOWN_TOOL');
    await request(h.app).post('/tools/config_file').set('Content-Type', 'application/json').send('{"action":').expect(400);
    await request(h.app).post('/tools/config_file').send([1, 2]).expect(400);
    await request(h.app).post('/tools/validate').send({ config: 1, schema: [] }).expect(400);
  });

  it('reports a missing workspace root as NOT_CONFIGURED', async () => {
    const broken = makeApp({ env: { WORKSPACE_ROOTS: '/no/such/root' } });
    try {
      const res = await request(broken.app).post('/tools/config_file').send({ action: 'read', path: 'a.json' }).expect(503);
      expect(res.body.code).toBe('NOT_CONFIGURED');
      expect((await request(broken.app).get('/health').expect(200)).body.status).toBe('degraded');
    } finally {
      await broken.close();
    }
  });

  it('fails fast on bad configuration, naming the variable', () => {
    expect(() => readConfig({ ENV_SECRET_PATTERNS: 'ok,(' })).toThrow(/ENV_SECRET_PATTERNS/);
    expect(() => readConfig({ BACKUP_KEEP: '0' })).toThrow(/BACKUP_KEEP/);
    expect(readConfig({ WORKSPACE_ROOTS: '/a,/b' }).WORKSPACE_ROOTS).toEqual(['/a', '/b']);
  });

  it('redacts names matching extra ENV_SECRET_PATTERNS', async () => {
    const custom = makeApp({ env: { ENV_SECRET_PATTERNS: '^MCP_PIN$' }, environment: { MCP_PIN: '1234', MCP_OTHER_KEY: 'visible-now' } });
    try {
      const res = await request(custom.app).post('/tools/env_vars').send({}).expect(200);
      expect(res.body.result.variables).toEqual([
        { name: 'MCP_OTHER_KEY', value: 'visible-now', redacted: false },
        { name: 'MCP_PIN', value: '[redacted]', redacted: true },
      ]);
    } finally {
      await custom.close();
    }
  });
});
