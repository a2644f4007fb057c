/**
 * Class 2 (issue 27) for the toolkit's `precommit`: a hostile repository inside the workspace whose
 * config (or an included file, or its attributes) names programs git would run on status and diff:
 * fsmonitor, external diff, textconv and clean filters, hooks. precommit runs git through
 * @mcp-fleet/git, as git-mcp does: inside the OS sandbox with the repository's config sanitized and
 * every program setting forced off. Real repositories, the real toolkit over stdio, real bubblewrap;
 * with SANDBOX=off, and with SANDBOX=outer (as the gateway starts the toolkit, inside its own
 * sandbox, where bubblewrap cannot nest), only the hardened config stands, and repositories whose
 * own config names a program are refused (FORBIDDEN naming the setting).
 *
 * Each payload would leave a marker outside the workspace and inside the repository's .git, and say
 * PWNED in the answer; none may appear. Each arming is first shown to run under plain git, so the
 * test fails if an attack stops being one.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDir } from '@mcp-fleet/testing';
import { git, makeRepo, write } from '../../services/git-mcp/test/helpers';
import { inventoryStdioServers } from '../../services/mega-orchestrator/src/downstream/mcp-servers-config';
import { stdioLauncher } from '../../services/mega-orchestrator/src/downstream/stdio-sandbox';
import { startToolkit } from '../../services/toolkit-mcp-server/test/helpers';
import { DRIVER_ARMINGS, FSMONITOR_ARMINGS } from './fixtures/hostile-git';

const ws = tempDir('sec-precommit-ws-');
const outside = tempDir('sec-precommit-outside-');

const data = tempDir('sec-precommit-data-');

const toolkit = (env: Record<string, string>) => startToolkit(ws.dir, { LOG_LEVEL: 'error', ...env }, 'sec-precommit');

/**
 * The toolkit as the gateway starts it: its declaration from inventoryStdioServers (SANDBOX=outer),
 * run by the gateway's stdio launcher in the gateway's sandbox. The markers' directory is made
 * writable in that sandbox, so that a program git ran there would leave its marker.
 */
async function inGatewaySandbox(): Promise<Client> {
  const spec = inventoryStdioServers({ WORKSPACE_ROOTS: ws.dir, LOG_LEVEL: 'error' }).specs[0].mcp!;
  if (spec.transport !== 'stdio' || spec.sandbox === false) throw new Error('the toolkit is declared as a sandboxed stdio server');
  expect(spec.env.SANDBOX).toBe('outer');
  const launch = stdioLauncher({ mode: 'on', dataDir: data.dir })('toolkit-mcp-server', {
    ...spec,
    sandbox: { ...spec.sandbox, writable: [outside.dir] },
  });
  const client = new Client({ name: 'sec-precommit', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: launch.command, args: launch.args, cwd: launch.cwd, env: launch.env, stderr: 'pipe' }),
  );
  return client;
}

let sandboxed: Client;
let unsandboxed: Client;
let outer: Client;

beforeAll(async () => {
  [sandboxed, unsandboxed, outer] = await Promise.all([toolkit({}), toolkit({ SANDBOX: 'off' }), inGatewaySandbox()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([sandboxed?.close(), unsandboxed?.close(), outer?.close()]);
  ws.cleanup();
  outside.cleanup();
  data.cleanup();
});

let counter = 0;

/** A shell command that leaves `name` outside the workspace and in the repository's .git, and says PWNED. */
const payload = (dir: string, name: string) =>
  `touch '${path.join(outside.dir, name)}' '${path.join(dir, '.git', name)}' 2>/dev/null; echo PWNED-${name}`;

const ran = (dir: string, name: string) => fs.existsSync(path.join(outside.dir, name)) || fs.existsSync(path.join(dir, '.git', name));

type Answer = { isError: boolean; body: Record<string, any>; text: string };
async function precommit(client: Client, dir: string): Promise<Answer> {
  const res = (await client.callTool({ name: 'precommit', arguments: { path: dir } })) as {
    isError?: boolean;
    structuredContent?: Record<string, any>;
    content: { text: string }[];
  };
  const text = res.content.map((c) => c.text).join('');
  return { isError: res.isError === true, body: res.structuredContent ?? JSON.parse(text), text };
}

/** [label, the setting SANDBOX=off refuses (undefined: none; the hardened config alone must hold), how the repository is made hostile] */
const attacks: [string, string | undefined, (dir: string, cmd: string) => void][] = [
  ...FSMONITOR_ARMINGS,
  // a pager runs only for a terminal, which git never has here, so plain git cannot show those attacks to be real
  ...DRIVER_ARMINGS.filter(([, key]) => !key.includes('pager')),
  [
    'a post-index-change hook',
    undefined,
    (dir, cmd) => {
      write(path.join(dir, '.git', 'hooks', 'post-index-change'), `#!/bin/sh\n${cmd}\n`);
      fs.chmodSync(path.join(dir, '.git', 'hooks', 'post-index-change'), 0o755);
    },
  ],
];

/** Arms a fresh repository with `arm`, a change to README.md staged; proves on a twin that plain git runs the payload. */
function hostileRepo(label: string, arm: (dir: string, cmd: string) => void): { dir: string; name: string } {
  const n = ++counter;
  const twin = makeRepo(path.join(ws.dir, `twin-${n}`));
  arm(twin, payload(twin, `probe-${n}`));
  write(path.join(twin, 'README.md'), '# readme\nchanged line\n');
  // plain git, as a person would run it: status (fsmonitor), add (filters, hooks), diff (textconv, external)
  execFileSync('sh', ['-c', 'git status >/dev/null; git add README.md; git diff --cached >/dev/null'], { cwd: twin, stdio: 'ignore' });
  if (!ran(twin, `probe-${n}`)) throw new Error(`${label}: plain git did not run the payload, so this is no attack`);

  // the change is staged before the repository is armed (staging it after would run the payload)
  const dir = makeRepo(path.join(ws.dir, `hostile-${n}`));
  write(path.join(dir, 'README.md'), '# readme\nchanged line\n');
  git(dir, 'add', 'README.md');
  arm(dir, payload(dir, `attack-${n}`));
  return { dir, name: `attack-${n}` };
}

describe.each([
  ['sandboxed', () => sandboxed],
  ['SANDBOX=off', () => unsandboxed],
  // as the gateway starts it: inside the gateway's sandbox, git without one of its own
  ['SANDBOX=outer in the gateway sandbox', () => outer],
] as const)('%s: precommit on a repository that names programs for git', (mode, client) => {
  it.each(attacks)('%s: runs nothing, and checks the staged change or refuses naming the setting', async (label, key, arm) => {
    const { dir, name } = hostileRepo(label, arm);
    const answer = await precommit(client(), dir);
    expect(ran(dir, name)).toBe(false);
    expect(answer.text).not.toContain('PWNED');
    if (mode !== 'sandboxed' && key !== undefined) {
      expect(answer.isError).toBe(true);
      expect(answer.body.code).toBe('FORBIDDEN');
      expect(answer.body.error.toLowerCase()).toContain(key);
      return;
    }
    expect(answer.isError).toBe(false);
    expect(answer.body).toMatchObject({ staged: ['README.md'], repository: fs.realpathSync(dir) });
    expect(answer.body.diff).toContain('+changed line');
  });
});

describe('precommit and secret files', () => {
  it('reports a staged .env as a finding and withholds its diff', async () => {
    const dir = makeRepo(path.join(ws.dir, 'secrets'));
    write(path.join(dir, '.env'), 'DATABASE_PASSWORD=correct-horse-battery-staple\n');
    write(path.join(dir, 'app.txt'), 'plain\n');
    git(dir, 'add', '.env', 'app.txt');
    const answer = await precommit(sandboxed, dir);
    expect(answer.isError).toBe(false);
    expect(answer.body.ok).toBe(false);
    expect(answer.body.findings).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'secret-file', file: '.env' })]));
    expect(answer.body.withheld).toEqual(['.env']);
    expect(answer.body.diff).toContain('+plain');
    expect(answer.text).not.toContain('correct-horse-battery-staple');
  });
});
