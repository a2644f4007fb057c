import request from 'supertest';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const config = configSchema.parse({ ...testConfig, DATA_DIR: '/tmp' });
const { app } = createApp({ config, logger: testLogger() });

describe('system-mcp', () => {
  it('lists its four tools with JSON Schemas generated from zod', async () => {
    const res = await request(app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'disk_usage',
      'process_list',
      'resource_monitor',
      'system_info',
    ]);
    const rm = res.body.tools.find((t: { name: string }) => t.name === 'resource_monitor');
    expect(rm.inputSchema).toMatchObject({ type: 'object', properties: { sampleMs: { type: 'integer', minimum: 50, maximum: 5000 } } });
    expect(rm.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('answers system_info through POST /tools/{tool} and /tools/call with the envelope', async () => {
    const direct = await request(app).post('/tools/system_info').send({}).expect(200);
    expect(direct.body).toMatchObject({ success: true, service: 'system-mcp', result: { node: process.version } });
    expect(new Date(direct.body.timestamp).toISOString()).toBe(direct.body.timestamp);
    const viaCall = await request(app).post('/tools/call').send({ name: 'system_info', arguments: {} }).expect(200);
    expect(viaCall.body.result.hostname).toBe(direct.body.result.hostname);
  });

  it('lists processes including this one, paginated', async () => {
    const res = await request(app).post('/tools/process_list').send({ sortBy: 'pid', limit: 500 }).expect(200);
    expect(res.body.result.processes.some((p: { pid: number }) => p.pid === process.pid)).toBe(true);
    const small = await request(app).post('/tools/process_list').send({ sortBy: 'pid', limit: 1 }).expect(200);
    expect(small.body.result.processes).toHaveLength(1);
    expect(small.body.result.nextCursor).toEqual(expect.any(String));
    const next = await request(app)
      .post('/tools/process_list')
      .send({ sortBy: 'pid', limit: 1, cursor: small.body.result.nextCursor })
      .expect(200);
    expect(next.body.result.processes[0].pid).toBeGreaterThan(small.body.result.processes[0].pid);
  });

  it('reports disk usage of / and refuses relative paths', async () => {
    const res = await request(app).post('/tools/disk_usage').send({ path: '/' }).expect(200);
    expect(res.body.result.disks[0].totalBytes).toBeGreaterThan(0);
    const bad = await request(app).post('/tools/disk_usage').send({ path: 'etc' }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    await request(app).post('/tools/disk_usage').send({ path: '/no/such/dir' }).expect(404);
  });

  it('samples CPU over the requested window', async () => {
    const res = await request(app).post('/tools/resource_monitor').send({ sampleMs: 60 }).expect(200);
    expect(res.body.result.cpu.percent).toBeGreaterThanOrEqual(0);
    expect(res.body.result.memory.totalBytes).toBeGreaterThan(0);
  });

  it('rejects wrong types, unknown fields and unknown tools with documented codes', async () => {
    const wrong = await request(app).post('/tools/resource_monitor').send({ sampleMs: 'fast' }).expect(400);
    expect(wrong.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'system-mcp' });
    expect(wrong.body.details[0].path).toBe('sampleMs');
    await request(app).post('/tools/system_info').send({ extra: 1 }).expect(400);
    const unknown = await request(app).post('/tools/call').send({ name: 'rm_rf', arguments: {} }).expect(404);
    expect(unknown.body.code).toBe('UNKNOWN_TOOL');
  });

  it('serves health and Prometheus metrics', async () => {
    const health = await request(app).get('/health').expect(200);
    expect(health.body).toMatchObject({ status: 'healthy', service: 'system-mcp', tools: 4 });
    await request(app).post('/tools/system_info').send({});
    const metrics = await request(app).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/mcp_fleet_tool_calls_total\{tool="system_info",outcome="ok",service="system-mcp"\} \d+/);
  });
});
