import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import type { ServiceApp } from '@mcp-fleet/kit';
import { readConfig } from '../src/config';
import { SANDBOX_HOME } from '@mcp-fleet/sandbox';
import { buildApp, running, testEnv, waitUntil } from './helpers';

const run = (service: ServiceApp, body: Record<string, unknown>) => request(service.app).post('/command').send(body);

describe('execute_command without a shell (default policy)', () => {
  const ws = tempDir('terminal-mcp-');
  const outside = tempDir('terminal-outside-');
  let service: ServiceApp;

  beforeAll(async () => {
    fs.mkdirSync(path.join(ws.dir, 'sub'));
    fs.writeFileSync(path.join(ws.dir, 'sub', 'data.txt'), 'b\na\nc\n');
    service = await buildApp(ws.dir);
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
    outside.cleanup();
  });

  it('runs a program and reports its output in the envelope', async () => {
    const res = await run(service, { command: 'echo hello world' }).expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'terminal-mcp' });
    expect(res.body.result).toMatchObject({
      exitCode: 0,
      signal: null,
      stdout: 'hello world\n',
      stderr: '',
      truncated: false,
      timedOut: false,
      cwd: '.',
    });
    expect(res.body.result.durationMs).toEqual(expect.any(Number));
  });

  it('groups quoted words and passes args[] literally', async () => {
    const quoted = await run(service, { command: `printf '%s|' "a b" 'c d' e\\ f` }).expect(200);
    expect(quoted.body.result.stdout).toBe('a b|c d|e f|');
    const literal = await run(service, { command: 'echo', args: ['$(id)', ';', '`id`', '*', '> x'] }).expect(200);
    expect(literal.body.result.stdout).toBe('$(id) ; `id` * > x\n');
  });

  it('reports non-zero exit codes as results, with stderr', async () => {
    const f = await run(service, { command: 'false' }).expect(200);
    expect(f.body.result.exitCode).toBe(1);
    const ls = await run(service, { command: 'ls no-such-entry' }).expect(200);
    expect(ls.body.result.exitCode).not.toBe(0);
    expect(ls.body.result.stderr).toMatch(/no-such-entry/);
  });

  it('feeds stdin and runs in the requested cwd', async () => {
    const wc = await run(service, { command: 'wc -c', stdin: 'abcd' }).expect(200);
    expect(wc.body.result.stdout.trim()).toBe('4');
    const sorted = await run(service, { command: 'sort data.txt', cwd: 'sub' }).expect(200);
    expect(sorted.body.result).toMatchObject({ stdout: 'a\nb\nc\n', cwd: 'sub' });
    const pwd = await run(service, { command: 'pwd', cwd: path.join(ws.dir, 'sub') }).expect(200);
    expect(pwd.body.result.stdout.trim()).toBe(path.join(ws.dir, 'sub'));
    const noStdin = await run(service, { command: 'cat' }).expect(200);
    expect(noStdin.body.result).toMatchObject({ exitCode: 0, stdout: '' });
  });

  it('stops a command at its time limit and reports timedOut', async () => {
    const res = await run(service, { command: 'sleep 10', timeoutMs: 300 }).expect(200);
    expect(res.body.result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
    expect(res.body.result.durationMs).toBeLessThan(9000);
  });

  it('cuts output at TERMINAL_MAX_OUTPUT_BYTES', async () => {
    const small = await buildApp(ws.dir, { TERMINAL_MAX_OUTPUT_BYTES: '1024' });
    fs.writeFileSync(path.join(ws.dir, 'big.txt'), 'z'.repeat(5000));
    const res = await run(small, { command: 'cat big.txt' }).expect(200);
    expect(res.body.result.truncated).toBe(true);
    expect(res.body.result.stdout).toBe('z'.repeat(1024));
    const fits = await run(small, { command: 'head -c 1000 big.txt' }).expect(200);
    expect(fits.body.result).toMatchObject({ truncated: false, exitCode: 0 });
    await small.close();
  });

  it.each([
    ['echo hi; id', '";"'],
    ['echo hi | wc -c', '"|"'],
    ['true && id', '"&&"'],
    ['false || id', '"||"'],
    ['echo $(id)', 'command substitution'],
    ['echo `id`', 'backticks'],
    ['echo hi > out.txt', '">"'],
    ['cat < /etc/passwd', '"<"'],
    ['echo *', 'glob pattern'],
    ['echo $HOME', '$ expansion'],
    ['sleep 1 &', '"&"'],
    ['echo hi # comment', 'comment'],
  ])('refuses the shell construct in %j with FORBIDDEN', async (command, construct) => {
    const res = await run(service, { command }).expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(res.body.error).toContain(construct);
    expect(res.body.error).toContain('TERMINAL_ALLOW_SHELL');
  });

  it('refuses a line break, and ran nothing for any refused line', async () => {
    const res = await run(service, { command: 'echo hi\nid' }).expect(403);
    expect(res.body.error).toMatch(/line break/);
    expect(fs.existsSync(path.join(ws.dir, 'out.txt'))).toBe(false);
  });

  it.each([
    'rm -rf sub',
    '/bin/rm sub/data.txt',
    './script',
    'sh -c id',
    'bash',
    'node -e 1',
    'git status',
    'env',
    'xargs',
    '/bin/echo hi',
  ])('refuses the program of %j', async (command) => {
    const res = await run(service, { command }).expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(fs.existsSync(path.join(ws.dir, 'sub', 'data.txt'))).toBe(true);
  });

  it.each([
    ['sort -o', { command: 'sort -o written.txt sub/data.txt' }],
    ['sort -ro', { command: 'sort -ro written.txt sub/data.txt' }],
    ['sort --output', { command: 'sort', args: ['--output=written.txt', 'sub/data.txt'] }],
    ['sort --compress-program', { command: 'sort --compress-program=sh sub/data.txt' }],
    ['uniq with an output operand', { command: 'uniq sub/data.txt written.txt' }],
    ['date --set', { command: 'date --set=2000-01-01' }],
  ])('refuses %s, which would write a file or start a program', async (_name, body) => {
    const res = await run(service, body).expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(fs.existsSync(path.join(ws.dir, 'written.txt'))).toBe(false);
  });

  it('still runs sort and uniq for reading', async () => {
    const res = await run(service, { command: 'uniq -c', stdin: 'a\na\nb\n' }).expect(200);
    expect(res.body.result.stdout).toMatch(/2 a\n\s+1 b/);
  });

  it('confines cwd to the workspace roots', async () => {
    expect((await run(service, { command: 'pwd', cwd: '..' }).expect(403)).body.code).toBe('FORBIDDEN');
    await run(service, { command: 'pwd', cwd: '/etc' }).expect(403);
    await run(service, { command: 'pwd', cwd: outside.dir }).expect(403);
    fs.symlinkSync(outside.dir, path.join(ws.dir, 'link-out'));
    await run(service, { command: 'pwd', cwd: 'link-out' }).expect(403);
    await run(service, { command: 'pwd', cwd: 'missing' }).expect(404);
    await run(service, { command: 'pwd', cwd: 'sub/data.txt' }).expect(400);
  });

  it('rejects malformed input with VALIDATION_ERROR', async () => {
    await run(service, {}).expect(400);
    await run(service, { command: '' }).expect(400);
    await run(service, { command: '   ' }).expect(400);
    await run(service, { command: 'echo', args: 'not-an-array' }).expect(400);
    await run(service, { command: 'echo', timeoutMs: 9000 }).expect(400);
    await run(service, { command: 'echo', timeoutMs: 'soon' }).expect(400);
    await run(service, { command: 'echo', shell: true }).expect(400);
    const nul = await run(service, { command: 'echo a\0b' }).expect(400);
    expect(nul.body.code).toBe('VALIDATION_ERROR');
    await run(service, { command: 'echo', args: ['a\0b'] }).expect(400);
  });
});

describe('execute_command with node allowlisted (children, environment)', () => {
  const ws = tempDir('terminal-node-');
  let service: ServiceApp;

  beforeAll(async () => {
    service = await buildApp(ws.dir, {
      TERMINAL_ALLOWED_COMMANDS: 'node,echo,no-such-program-xyz',
      TERMINAL_ENV_PASSTHROUGH: 'VISIBLE_SETTING',
      VISIBLE_SETTING: 'shown',
      NOT_LISTED: 'hidden',
      MY_API_TOKEN: 'tok-123',
      DATABASE_PASSWORD: 'pw-456',
      AWS_SECRET_ACCESS_KEY: 'aws-789',
      LC_ALL: 'C',
      PATH: `.:${process.env.PATH}`,
    });
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
  });

  it('gives children only the scrubbed environment', async () => {
    const res = await run(service, { command: 'node -e "console.log(JSON.stringify(process.env))"' }).expect(200);
    const env = JSON.parse(res.body.result.stdout);
    expect(env.VISIBLE_SETTING).toBe('shown');
    expect(env.LC_ALL).toBe('C');
    expect(env.HOME).toBe(SANDBOX_HOME); // an empty directory of the sandbox's own, never the service's home
    for (const name of ['NOT_LISTED', 'MY_API_TOKEN', 'DATABASE_PASSWORD', 'AWS_SECRET_ACCESS_KEY']) expect(env[name]).toBeUndefined();
    expect(res.body.result.stdout).not.toMatch(/tok-123|pw-456|aws-789/);
    expect(env.PATH.split(':')).not.toContain('.');
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const script =
      "const c=require('child_process').spawn('sleep',['30.417'],{stdio:'ignore'});console.log(c.pid);setInterval(()=>{},1000)";
    const res = await run(service, { command: 'node -e', args: [script], timeoutMs: 1500 }).expect(200);
    expect(res.body.result.timedOut).toBe(true);
    expect(Number(res.body.result.stdout.trim())).toBeGreaterThan(0);
    expect(await waitUntil(() => running('sleep 30.417').length === 0)).toBe(true);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const script = "process.on('SIGTERM',()=>{});console.log('ready');setInterval(()=>{},1000)";
    const res = await run(service, { command: 'node -e', args: [script], timeoutMs: 500 }).expect(200);
    expect(res.body.result).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: 'ready\n' });
  });

  it('stops a program that floods its output past the cap', async () => {
    const res = await run(service, {
      command: 'node -e',
      args: ["setInterval(()=>process.stdout.write('x'.repeat(65536)),1)"],
      timeoutMs: 7000,
    }).expect(200);
    expect(res.body.result.truncated).toBe(true);
    expect(res.body.result.timedOut).toBe(false);
    expect(res.body.result.stdout.length).toBe(1024 * 1024);
  });

  it('answers NOT_FOUND for an allowlisted program that is not installed', async () => {
    const res = await run(service, { command: 'no-such-program-xyz --help' }).expect(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  it('refuses secret-looking names in TERMINAL_ENV_PASSTHROUGH at boot', () => {
    expect(() => readConfig(testEnv({ TERMINAL_ENV_PASSTHROUGH: 'GITHUB_TOKEN' }))).toThrow(/TERMINAL_ENV_PASSTHROUGH/);
    expect(() => readConfig(testEnv({ TERMINAL_ENV_PASSTHROUGH: 'BAD NAME' }))).toThrow(/TERMINAL_ENV_PASSTHROUGH/);
  });
});

describe('execute_command with TERMINAL_ALLOW_SHELL=true', () => {
  const ws = tempDir('terminal-shell-');
  let service: ServiceApp;

  beforeAll(async () => {
    service = await buildApp(ws.dir, { TERMINAL_ALLOW_SHELL: 'true' });
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
  });

  it('runs pipes, redirects and && between allowlisted programs', async () => {
    const pipe = await run(service, { command: 'echo hello | wc -c' }).expect(200);
    expect(pipe.body.result.stdout.trim()).toBe('6');
    const redirect = await run(service, { command: 'echo saved > out.txt && cat out.txt' }).expect(200);
    expect(redirect.body.result.stdout).toBe('saved\n');
    expect(fs.readFileSync(path.join(ws.dir, 'out.txt'), 'utf8')).toBe('saved\n');
    const args = await run(service, { command: 'printf "%s|"', args: ['a b', '$(id)'] }).expect(200);
    expect(args.body.result.stdout).toBe('a b|$(id)|');
  });

  it('checks every program of the line against the allowlist', async () => {
    const res = await run(service, { command: 'echo hi | rm out.txt' }).expect(403);
    expect(res.body.error).toMatch(/"rm" is not an allowed program/);
    await run(service, { command: 'X=1 sh -c id' }).expect(403);
    await run(service, { command: 'echo ok; bash' }).expect(403);
    await run(service, { command: '$CMD' }).expect(403);
    await run(service, { command: 'sort -o copy.txt out.txt' }).expect(403);
    await run(service, { command: 'sort $OPTS out.txt' }).expect(403);
    expect(fs.existsSync(path.join(ws.dir, 'out.txt'))).toBe(true);
    expect(fs.existsSync(path.join(ws.dir, 'copy.txt'))).toBe(false);
  });

  it('refuses command substitution, which would hide programs', async () => {
    for (const command of ['echo $(id)', 'echo `id`', 'cat <(ls)']) {
      const res = await run(service, { command }).expect(403);
      expect(res.body.error).toMatch(/Command substitution/);
    }
  });

  it('leaves no background process running after the call', async () => {
    const res = await run(service, { command: 'sleep 30.731 & echo $!' }).expect(200);
    expect(Number(res.body.result.stdout.trim())).toBeGreaterThan(0);
    expect(await waitUntil(() => running('sleep 30.731').length === 0)).toBe(true);
  });

  it('keeps a command within the budget the gateway sends, answering timedOut itself before the gateway gives up', async () => {
    const started = Date.now();
    const res = await request(service.app).post('/command').set('x-fleet-budget-ms', '1200').send({ command: 'sleep 5' }).expect(200);
    expect(res.body.result).toMatchObject({ timedOut: true });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('kills a timed-out pipeline', async () => {
    const res = await run(service, { command: 'sleep 10 | sleep 10', timeoutMs: 300 }).expect(200);
    expect(res.body.result.timedOut).toBe(true);
    expect(res.body.result.durationMs).toBeLessThan(9000);
  });
});
