/** The launcher on its own: a service that fails to start is reported with its error, the rest keep running. */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { getService } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { formatLine, Launcher } from '../../scripts/fleet/launcher';
import { planFleet } from '../../scripts/fleet/plan';
import { isAlive } from '../support/fleet-process';

describe('launcher', () => {
  it('reports a service that fails at boot with its error and keeps the healthy one running', async () => {
    const tmp = tempDir('launcher-');
    const offset = 25_000 + Math.floor(Math.random() * 100) * 100;
    const plan = planFleet({
      env: { ...process.env, FLEET_PORT_OFFSET: String(offset), FLEET_DATA_DIR: tmp.dir, WORKSPACE_ROOTS: tmp.dir },
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
