/**
 * scripts/install-mcp.sh on a scratch copy of the repository: it scaffolds a service, links it, derives
 * compose, Prometheus, the README and the configuration docs from its new inventory entry, and the
 * new service's own tests and the static shape checks pass there. The real tree is never touched.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { tempDir } from '@mcp-fleet/testing';
import { REPO_ROOT } from '../support/fleet-process';

function run(cmd: string, args: string[], cwd: string, timeout = 120_000) {
  const res = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, CI: '1', FORCE_COLOR: '0' } });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
}

describe('scripts/install-mcp.sh', () => {
  const tmp = tempDir('mcp-fleet-install-mcp-');
  const copy = path.join(tmp.dir, 'repo');
  afterAll(() => tmp.cleanup());

  beforeAll(() => {
    // the working tree as git sees it (tracked and untracked, ignored files left out), then its packages
    fs.mkdirSync(copy);
    const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .stdout.split('\0')
      .filter((f) => f && fs.existsSync(path.join(REPO_ROOT, f)));
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
      fs.copyFileSync(path.join(REPO_ROOT, f), path.join(copy, f));
      fs.chmodSync(path.join(copy, f), fs.statSync(path.join(REPO_ROOT, f)).mode);
    }
    const install = run('pnpm', ['install', '--prefer-offline', '--frozen-lockfile'], copy);
    if (install.code !== 0) throw new Error(`pnpm install in the scratch copy failed:\n${install.out}`);
  }, 180_000);

  it('refuses a taken port before writing anything', () => {
    const res = run('bash', ['scripts/install-mcp.sh', '--port', '7001', 'weather-mcp'], copy);
    expect(res.code).toBe(1);
    expect(res.out).toMatch(/port 7001 belongs to filesystem-mcp/);
    expect(fs.existsSync(path.join(copy, 'services/weather-mcp'))).toBe(false);
  });

  it('scaffolds a service whose tests pass, with its compose service and Prometheus target', () => {
    const res = run(
      'bash',
      [
        'scripts/install-mcp.sh',
        '--port',
        '7090',
        '--tools',
        'weather_now,weather_forecast',
        '-d',
        'Weather from a configured API.',
        '--test',
        'weather-mcp',
      ],
      copy,
      240_000,
    );
    expect(res.out).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(res.out).toMatch(/tests: \d+ passed, 0 failed/);
    expect(res.code).toBe(0);

    const compose = YAML.parse(fs.readFileSync(path.join(copy, 'compose.yaml'), 'utf8')) as { services: Record<string, unknown> };
    expect(compose.services['weather-mcp']).toBeDefined();
    expect(fs.readFileSync(path.join(copy, 'monitoring/prometheus/prometheus.yml'), 'utf8')).toContain('weather-mcp:7090');
    expect(fs.readFileSync(path.join(copy, 'README.md'), 'utf8')).toMatch(/weather-mcp.*7090/);
    // the files it wrote are formatted as the repository's check wants
    const fmt = run(
      'pnpm',
      ['exec', 'prettier', '--check', 'services/weather-mcp', 'docs/services/weather-mcp.md', 'packages/inventory'],
      copy,
    );
    expect(fmt.out).toMatch(/All matched files use Prettier code style/);
    // a second run refuses, and leaves the service as it was
    const again = run('bash', ['scripts/install-mcp.sh', '--port', '7091', 'weather-mcp'], copy);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/already exists/);
  }, 300_000);
});
