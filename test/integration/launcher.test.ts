/** The launcher on its own: a service that fails to start is reported with its error, the rest keep running. */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { getService } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { formatLine, Launcher } from '../../scripts/fleet/launcher';
import { planFleet } from '../../scripts/fleet/plan';
import { isAlive, waitFor } from '../support/fleet-process';

describe('launcher', () => {
  it('tells the gateway which services it started with --only, and nothing without it', () => {
    const env = { ...process.env, FLEET_DATA_DIR: '/tmp/fleet-plan' };
    const gateway = (only?: string[]) => planFleet({ env, only }).specs.find((s) => s.entry.id === 'mega-orchestrator')!;
    expect(gateway(['system-mcp', 'git-mcp']).env.FLEET_SERVICES).toBe('git-mcp,system-mcp');
    expect(gateway().env.FLEET_SERVICES).toBe(process.env.FLEET_SERVICES);
  });

  it('reports a service that fails at boot with its error and keeps the healthy one running', async () => {
    const tmp = tempDir('launcher-');
    const offset = 25_000 + Math.floor(Math.random() * 100) * 100;
    const plan = planFleet({
      env: {
        ...process.env,
        FLEET_PORT_OFFSET: String(offset),
        FLEET_DATA_DIR: path.join(tmp.dir, 'data'),
        WORKSPACE_ROOTS: path.join(tmp.dir, 'ws'),
      },
      only: ['system-mcp'],
    });
    const system = plan.specs.find((s) => s.entry.id === 'system-mcp')!;
    const broken = path.join(tmp.dir, 'broken.ts');
    fs.writeFileSync(
      broken,
      `process.stdout.write(JSON.stringify({ level: 'error', message: 'database file is locked; stop the other process' }) + '\\n'); process.exit(3);\n`,
    );
    const brokenSpec = {
      ...system,
      entry: { ...getService('config-mcp')!, id: 'broken-mcp' },
      script: broken,
      port: system.port + 1,
      url: `http://127.0.0.1:${system.port + 1}`,
    };

    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (b: Buffer) => lines.push(b.toString()));
    const launcher = new Launcher({ startTimeoutMs: 30_000, stopTimeoutMs: 5_000, color: false, out, nodeArgs: ['--import', 'tsx'] });
    launcher.start([system, brokenSpec]);
    await launcher.waitHealthy();

    const states = Object.fromEntries(launcher.state().map((s) => [s.id, s]));
    expect(states['system-mcp'].state).toBe('healthy');
    // the data directory holds the fleet's secrets: only its owner may enter it
    expect(fs.statSync(path.join(tmp.dir, 'data')).mode & 0o777).toBe(0o700);
    expect(states['broken-mcp'].state).toBe('failed');
    expect(states['broken-mcp'].error).toBe('exited with code 3: database file is locked; stop the other process');
    expect(launcher.table()).toMatch(/broken-mcp\s+\d+\s+\S+\s+failed/);
    expect(lines.join('')).toMatch(/system-mcp\s+\| .*"message":"system-mcp listening"/);
    expect((await fetch(`${system.url}/health`)).status).toBe(200);

    const pid = states['system-mcp'].pid!;
    await launcher.stop();
    expect(isAlive(pid)).toBe(false);
    expect(launcher.state().every((s) => s.state === 'stopped' || s.state === 'failed')).toBe(true);
    tmp.cleanup();
  }, 60_000);

  it('formats JSON log lines for a terminal and leaves other lines alone', () => {
    const json = JSON.stringify({ level: 'info', message: 'listening', timestamp: '2026-11-22T10:11:12.000Z', service: 'x', port: 7001 });
    expect(formatLine('git-mcp', 10, json, false, 36)).toBe(`git-mcp    | ${json}`);
    const pretty = formatLine('git-mcp', 10, json, true, 36);
    expect(pretty).toContain('10:11:12');
    expect(pretty).toContain('listening');
    expect(pretty).toContain('port=7001');
    expect(formatLine('git-mcp', 7, 'plain text', true, 36)).toMatch(/git-mcp \|.* plain text$/);
  });
});

describe('launcher restarts', () => {
  const tmp = tempDir('launcher-restart-');
  afterAll(() => tmp.cleanup());

  it('restarts a healthy service that dies, with the restart in the table and the state', async () => {
    const offset = 26_000 + Math.floor(Math.random() * 100) * 100;
    const plan = planFleet({
      env: {
        ...process.env,
        FLEET_PORT_OFFSET: String(offset),
        FLEET_DATA_DIR: path.join(tmp.dir, 'data'),
        WORKSPACE_ROOTS: path.join(tmp.dir, 'ws'),
      },
      only: ['system-mcp'],
    });
    const system = plan.specs.find((s) => s.entry.id === 'system-mcp')!;
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (b: Buffer) => lines.push(b.toString()));
    const launcher = new Launcher({
      startTimeoutMs: 30_000,
      stopTimeoutMs: 5_000,
      color: false,
      out,
      nodeArgs: ['--import', 'tsx'],
      restart: { initialBackoffMs: 100 },
    });
    launcher.start([system]);
    await launcher.waitHealthy();
    const first = launcher.state()[0].pid!;
    process.kill(first, 'SIGKILL');
    await waitFor(
      'restarted and healthy',
      async () => launcher.state()[0].state === 'healthy' && launcher.state()[0].pid !== first,
      30_000,
    );
    expect(isAlive(first)).toBe(false);
    expect(launcher.state()[0].restarts).toBe(1);
    expect((await fetch(`${system.url}/health`)).status).toBe(200);
    expect(launcher.table()).toMatch(/system-mcp .* healthy .* restarted 1×/);
    expect(lines.join('')).toMatch(/system-mcp exited with SIGKILL; restarting in 100 ms \(restart 1 of 5 allowed in 60 s\)/);
    await launcher.stop();
  }, 60_000);

  it('gives up on a crash loop and says so, leaving the others running', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(p));
      });
    });
    // Healthy for a moment, then dies: every restart does the same.
    const flaky = path.join(tmp.dir, 'flaky.js');
    fs.writeFileSync(
      flaky,
      `require('node:http').createServer((q, s) => s.end('{}')).listen(${port}, '127.0.0.1'); setTimeout(() => process.exit(7), 400);\n`,
    );
    const spec = {
      ...planFleet({ env: { ...process.env, FLEET_DATA_DIR: tmp.dir }, only: ['system-mcp'] }).specs[0],
      entry: { ...getService('config-mcp')!, id: 'flaky-mcp' },
      script: flaky,
      port,
      url: `http://127.0.0.1:${port}`,
    };
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (b: Buffer) => lines.push(b.toString()));
    const launcher = new Launcher({
      startTimeoutMs: 10_000,
      stopTimeoutMs: 2_000,
      color: false,
      out,
      nodeArgs: [],
      restart: { maxRestarts: 2, windowMs: 30_000, initialBackoffMs: 50 },
    });
    launcher.start([spec]);
    await launcher.waitHealthy();
    await waitFor('crash loop detected', async () => launcher.state()[0].state === 'crash-loop', 20_000);
    const s = launcher.state()[0];
    expect(s.restarts).toBe(2);
    expect(s.error).toMatch(/^crashed 3 times in 30 s, not restarted again; last: exited with code 7/);
    expect(lines.join('')).toMatch(/flaky-mcp crashed 3 times in 30 s, not restarted again.*Fix the cause and restart the fleet/);
    await launcher.stop();
  }, 60_000);
});
