/**
 * The alternate coordinator surface (port 8020) through the real gateway and real services: in-process
 * (filesystem-mcp, memory-mcp and system-mcp behind a gateway on port 0), and as `fleet up` starts it.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { getService } from '@mcp-fleet/inventory';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { createApp as createCoordinator } from '../../services/coordinator/src/app';
import { configSchema as coordinatorConfig } from '../../services/coordinator/src/config';
import { createApp as createFilesystem } from '../../services/filesystem-mcp/src/app';
import { configSchema as filesystemConfig } from '../../services/filesystem-mcp/src/config';
import { createApp as createGateway, type Gateway } from '../../services/mega-orchestrator/src/http/app';
import { configSchema as gatewayConfig, defaultDownstreams } from '../../services/mega-orchestrator/src/core/config';
import { createApp as createMemory } from '../../services/memory-mcp/src/app';
import { configSchema as memoryConfig } from '../../services/memory-mcp/src/config';
import { createApp as createSystem } from '../../services/system-mcp/src/app';
import { configSchema as systemConfig } from '../../services/system-mcp/src/config';
import { postJson, startFleet, type FleetHandle } from '../support/fleet-process';

describe('coordinator through the real gateway and services (in-process)', () => {
  const tmp = tempDir('coordinator-it-');
  const workspace = path.join(tmp.dir, 'ws');
  const servers: RunningServer[] = [];
  const closers: (() => Promise<void>)[] = [];
  let gateway: Gateway;
  let coordinator: ReturnType<typeof createCoordinator>;

  beforeAll(async () => {
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'first line\n');
    const base = { ...testConfig, WORKSPACE_ROOTS: workspace };
    const services = {
      'filesystem-mcp': await createFilesystem({
        config: filesystemConfig.parse({ ...base, DATA_DIR: path.join(tmp.dir, 'fs') }),
        logger: testLogger(),
        defaultMetrics: false,
      }),
      'memory-mcp': await createMemory({
        config: memoryConfig.parse({ ...base, DATA_DIR: path.join(tmp.dir, 'memory') }),
        logger: testLogger(),
      }),
      'system-mcp': createSystem({ config: systemConfig.parse({ ...base, DATA_DIR: path.join(tmp.dir, 'system') }), logger: testLogger() }),
    };
    const env: Record<string, string> = {};
    for (const [id, svc] of Object.entries(services)) {
      const running = await serve(svc.app);
      servers.push(running);
      closers.push(() => svc.close());
      env[`${id.toUpperCase().replace(/-/g, '_')}_URL`] = running.url;
    }
    // database-mcp is in the registry but not running: its tools must answer 503, not 500
    env.DATABASE_MCP_URL = 'http://127.0.0.1:9';
    const ids = [...Object.keys(services), 'database-mcp'];
    gateway = createGateway({
      config: gatewayConfig.parse({
        ...testConfig,
        DATA_DIR: path.join(tmp.dir, 'gateway'),
        // one health check decides (no poll comes before the tests end): the services answer in this
        // process, so a long pause of its own (a collection of the test runner's heap, most likely, when
        // 500 ms once failed here) must not read as a service down (database-mcp's refused connection
        // fails at once all the same)
        HEALTH_POLL_MS: '60000',
        HEALTH_TIMEOUT_MS: '10000',
      }),
      logger: testLogger('gateway'),
      services: defaultDownstreams(
        env,
        ids.map((id) => getService(id)!),
      ),
      autoStart: false,
    });
    await gateway.refresh();
    const gw = await serve(gateway.app);
    servers.push(gw);
    coordinator = createCoordinator({
      config: coordinatorConfig.parse({ ...testConfig, DATA_DIR: path.join(tmp.dir, 'coordinator'), COORDINATOR_GATEWAY_URL: gw.url }),
      logger: testLogger('coordinator'),
      defaultMetrics: false,
    });
  });

  afterAll(async () => {
    await coordinator?.close();
    for (const s of servers.reverse()) {
      s.server.closeAllConnections();
      await s.stop();
    }
    await gateway?.mcp.close();
    await gateway?.close();
    for (const close of closers) await close();
    tmp.cleanup();
  });

  const call = (tool: string, args: Record<string, unknown> = {}) => request(coordinator.app).post('/mcp').send({ tool, arguments: args });

  it('writes, reads and lists files in the workspace with the contract names', async () => {
    const written = await call('file_write', { path: 'hello.txt', content: 'hello from the coordinator\n' }).expect(200);
    expect(written.body).toMatchObject({ success: true, service: 'coordinator' });
    expect(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello from the coordinator\n');
    const read = await call('file_read', { path: 'hello.txt' }).expect(200);
    expect(read.body.result.content).toBe('hello from the coordinator\n');
    const listed = await call('file_list', { path: '.' }).expect(200);
    expect(JSON.stringify(listed.body.result)).toContain('notes.txt');
    expect(JSON.stringify(listed.body.result)).toContain('hello.txt');
  });

  it('passes the services’ refusals through: a missing file is NOT_FOUND, a path outside the roots is refused', async () => {
    const missing = await call('file_read', { path: 'nope.txt' }).expect(404);
    expect(missing.body).toMatchObject({ success: false, code: 'NOT_FOUND', service: 'coordinator' });
    for (const escape of ['../outside.txt', '/etc/passwd', 'sub/../../x']) {
      const res = await call('file_read', { path: escape });
      expect([escape, res.status >= 400 && res.status < 500]).toEqual([escape, true]);
      expect(res.body.success).toBe(false);
    }
  });

  it('stores and finds memories with {key, content} and {query}, and answers the argument-free tools', async () => {
    const stored = await call('store_memory', {
      key: 'coordinator-it',
      content: 'the coordinator reaches memory through the gateway',
    }).expect(200);
    expect(stored.body.result.memory).toMatchObject({ key: 'coordinator-it' });
    const found = await call('search_memories', { query: 'coordinator gateway' }).expect(200);
    expect(JSON.stringify(found.body.result)).toContain('coordinator-it');
    expect((await call('list_memories').expect(200)).body.result).toBeDefined();
    expect((await call('memory_stats').expect(200)).body.result).toBeDefined();
    expect((await call('system_info').expect(200)).body.result).toMatchObject({ node: process.version });
  });

  it('answers UPSTREAM_UNAVAILABLE 503 for a service that is down, and the caller’s 400 before asking it', async () => {
    const down = await call('db_query', { query: 'SELECT 1' }).expect(503);
    expect(down.body).toMatchObject({ success: false, code: 'UPSTREAM_UNAVAILABLE', service: 'coordinator' });
    expect(down.headers['retry-after']).toBeDefined();
    const bad = await call('db_query', { sql: 'SELECT 1' }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('leaves the gateway routing as before: its tools are not the coordinator’s, and /services says what the coordinator is', async () => {
    const gw = servers[servers.length - 1].url;
    const git = await postJson(`${gw}/mcp`, { tool: 'git_status', arguments: { path: '.' } });
    expect(git.status).toBe(503);
    expect(git.body.error).toMatch(/git-mcp/);
    expect(git.body.error).not.toMatch(/coordinator/);
    const qualified = await postJson(`${gw}/mcp`, { tool: 'coordinator__file_read', arguments: { path: 'notes.txt' } });
    expect([qualified.status, qualified.body.code]).toEqual([404, 'UNKNOWN_TOOL']);
    const services = (await (await fetch(`${gw}/services`)).json()) as any;
    expect(services.services.find((s: any) => s.id === 'coordinator').reason).toMatch(
      /alternate coordinator surface: it calls this gateway/,
    );
  });

  it('reports in GET /status which of its services the gateway can route to', async () => {
    const status = await request(coordinator.app).get('/status').expect(200);
    const byId = Object.fromEntries(status.body.result.services.map((s: any) => [s.id, s]));
    expect(byId['filesystem-mcp']).toMatchObject({ status: 'healthy', routable: true });
    expect(byId['database-mcp']).toMatchObject({ routable: false });
    expect(status.body.result).toMatchObject({ status: 'degraded', gateway: { reachable: true } });
  });
});

describe('coordinator as `fleet up` starts it', () => {
  const tmp = tempDir('coordinator-fleet-');
  let fleet: FleetHandle;

  beforeAll(async () => {
    fs.mkdirSync(path.join(tmp.dir, 'ws'), { recursive: true });
    fs.writeFileSync(path.join(tmp.dir, 'ws', 'readme.txt'), 'served by the fleet\n');
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace: path.join(tmp.dir, 'ws'),
      only: ['coordinator', 'filesystem-mcp'],
    });
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it('runs on 8020 (plus the offset), healthy, and reads a file through the gateway', async () => {
    const coordinator = fleet.state().services.find((s) => s.id === 'coordinator');
    expect(coordinator).toMatchObject({ port: 8020 + fleet.offset, state: 'healthy' });
    const url = fleet.serviceUrl('coordinator', 8020);
    const health = await fetch(`${url}/health`);
    expect(((await health.json()) as any).checks.gateway.status).toBe('ok');
    const read = await postJson(`${url}/mcp`, { tool: 'file_read', arguments: { path: 'readme.txt' } });
    expect(read).toMatchObject({
      status: 200,
      body: { success: true, service: 'coordinator', result: { content: 'served by the fleet\n' } },
    });
    // the gateway does not list the coordinator's tools as its own: they are filesystem-mcp's
    const services = (await (await fetch(`${fleet.gateway}/tools/list`)).json()) as any;
    expect(services.tools.filter((t: any) => t.service === 'coordinator')).toEqual([]);
  });
});
