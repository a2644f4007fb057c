/**
 * Regression: a terminal's Ctrl-C reaches the whole process group (the launcher, every service, the
 * gateway's stdio server), and the launcher then sends each service SIGTERM. Every service used to
 * stop twice and die on an uncaught "write after end" from its logger. Here the group is signalled
 * as a terminal does, Ctrl-C pressed twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { freeOffset, REPO_ROOT } from '../support/fleet-process';

const ONLY = ['system-mcp', 'git-mcp', 'filesystem-mcp'];
const GATEWAY = 'mega-orchestrator';

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('Ctrl-C on a terminal running ./fleet up', () => {
  const tmp = tempDir('ctrl-c-');
  let launcher: ChildProcess | undefined;

  afterAll(() => {
    if (launcher?.pid && groupAlive(launcher.pid)) process.kill(-launcher.pid, 'SIGKILL');
    tmp.cleanup();
  });

  it('stops every service once, each log ending with its shutdown line, and the launcher exits 0', async () => {
    const dataDir = path.join(tmp.dir, 'data');
    const workspace = path.join(tmp.dir, 'ws');
    fs.mkdirSync(workspace);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/fleet/cli.ts'), 'up', '--only', ONLY.join(',')],
      {
        cwd: REPO_ROOT,
        // its own process group, as a shell gives a foreground job: the group's id is its pid
        detached: true,
        env: {
          ...process.env,
          FLEET_PORT_OFFSET: String(await freeOffset()),
          FLEET_DATA_DIR: dataDir,
          WORKSPACE_ROOTS: workspace,
          HEALTH_POLL_MS: '300',
          NO_COLOR: '1',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    launcher = child;
    let output = '';
    child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<[number | null, string | null]>((resolve) => child.on('exit', (code, signal) => resolve([code, signal])));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fleet not ready in time:\n${output}`)), 90_000);
      const check = () => {
        if (output.includes('fleet ready:')) {
          clearTimeout(timer);
          resolve();
        } else if (child.exitCode !== null) reject(new Error(`launcher exited before ready:\n${output}`));
        else setTimeout(check, 100);
      };
      check();
    });
    expect(output).toMatch(new RegExp(`fleet ready: ${ONLY.length + 1}/${ONLY.length + 1} healthy`));

    const pid = child.pid!;
    process.kill(-pid, 'SIGINT');
    // pressed again while everything stops
    await new Promise((r) => setTimeout(r, 100));
    if (groupAlive(pid)) process.kill(-pid, 'SIGINT');
    const [code, signal] = await exited;

    expect(output).not.toMatch(/write after end|Unhandled|uncaught|throw er|Node\.js v\d+|"level":"error"/i);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(output).toContain('fleet: all stopped.');
    // nothing of the group is left: the services, the gateway and its stdio server
    await new Promise((r) => setTimeout(r, 200));
    expect(groupAlive(pid)).toBe(false);
    for (const id of [...ONLY, GATEWAY]) {
      const messages = fs
        .readFileSync(path.join(dataDir, 'logs', `${id}.log`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { message: string }).message);
      expect({ id, stopping: messages.filter((m) => m === `${id} stopping`).length, last: messages.at(-1) }).toEqual({
        id,
        stopping: 1,
        last: `${id} stopped`,
      });
      // the launcher showed each service's last line before it exited
      expect(output).toContain(`"message":"${id} stopped"`);
    }
  }, 120_000);
});
