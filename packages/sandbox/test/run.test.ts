import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { Sandbox, runInSandbox, runToCompletion, type RunInSandboxOptions, type SandboxConfig } from '../src';

const config: SandboxConfig = { SANDBOX: 'bwrap', SANDBOX_BWRAP: 'bwrap', SANDBOX_READ_ONLY_PATHS: [] };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-run-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const policy = { cwd: dir, env: { PATH: '/usr/bin:/bin' }, readOnly: [dir] };

/** The command lines of the host's processes that start with `prefix` (zombies have none). */
function running(prefix: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith(prefix));
}

const settle = () => new Promise((r) => setTimeout(r, 300));
/** A number no other test (or helper) sleeps for, so `ps` finds only this test's processes. */
const marker = () => `${Math.floor(Math.random() * 900) + 100}.${Math.floor(Math.random() * 900) + 100}`;

describe.each([
  ['bubblewrap', { ...config }],
  ['SANDBOX=off', { ...config, SANDBOX: 'off' as const }],
])('runInSandbox (%s)', (_name, sandboxConfig) => {
  let sandbox: Sandbox;
  const sh = (script: string, options: Partial<RunInSandboxOptions> = {}) =>
    runInSandbox(sandbox, 'sh', ['-c', script], { policy, maxOutputBytes: 64 * 1024, ...options });

  beforeAll(() => {
    sandbox = Sandbox.open(sandboxConfig);
  });

  it('reports the exit code and both outputs of a program that ends by itself', async () => {
    const res = await sh('echo out; echo err >&2; exit 3');
    expect(res).toMatchObject({ code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', timedOut: false, truncated: false });
    expect(res.stoppedBy).toBeUndefined();
    expect(res.durationMs).toEqual(expect.any(Number));
    expect((await sh('true')).code).toBe(0);
  });

  it('feeds stdin and closes it; without stdin the program reads end of file at once', async () => {
    expect((await runInSandbox(sandbox, 'wc', ['-c'], { policy, maxOutputBytes: 100, stdin: 'abcd' })).stdout.trim()).toBe('4');
    const noStdin = await runInSandbox(sandbox, 'cat', [], { policy, maxOutputBytes: 100, timeoutMs: 5000 });
    expect(noStdin).toMatchObject({ code: 0, stdout: '', timedOut: false });
    // a program that exits without reading its stdin is no error of the call
    expect((await sh('exit 0', { stdin: 'x'.repeat(1024 * 1024) })).code).toBe(0);
  });

  it('stops at the time limit: SIGTERM inside, and every process it started ends', async () => {
    const m = marker();
    const res = await sh(`sleep ${m} & sleep ${m}`, { timeoutMs: 300 });
    expect(res).toMatchObject({ timedOut: true, stoppedBy: 'timeout', code: null, signal: 'SIGTERM' });
    expect(res.durationMs).toBeLessThan(5000);
    await settle();
    expect(running(`sleep ${m}`)).toEqual([]);
  });

  it.each([
    ['after the grace', 400, 550, 5000],
    ['at once with no grace', 0, 0, 2000],
  ])('kills the whole process group %s when the program ignores SIGTERM', async (_when, killGraceMs, atLeast, below) => {
    const m = marker();
    const res = await sh(`trap "" TERM; sleep ${m} & sleep ${m}`, { timeoutMs: 200, killGraceMs });
    expect(res).toMatchObject({ timedOut: true, stoppedBy: 'timeout', signal: 'SIGKILL', code: null });
    expect(res.durationMs).toBeGreaterThanOrEqual(atLeast);
    expect(res.durationMs).toBeLessThan(below);
    await settle();
    expect(running(`sleep ${m}`)).toEqual([]);
  });

  it('reports a program killed by a signal', async () => {
    const res = await sh('kill -KILL $$');
    if (sandboxConfig.SANDBOX === 'off') expect(res).toMatchObject({ code: null, signal: 'SIGKILL' });
    // bubblewrap itself exits, with 128 + the signal's number
    else expect(res).toMatchObject({ code: 128 + os.constants.signals.SIGKILL, signal: null });
    expect(res.stoppedBy).toBeUndefined();
  });

  it('stops a program at the output cap, keeping exactly the first bytes', async () => {
    const res = await runInSandbox(sandbox, 'yes', [], { policy, maxOutputBytes: 1000, timeoutMs: 10_000 });
    expect(res).toMatchObject({ truncated: true, stoppedBy: 'output', timedOut: false });
    expect(res.stdout).toBe('y\n'.repeat(500));
    const fits = await sh('head -c 1000 /dev/zero | tr "\\0" z', { maxOutputBytes: 1000 });
    expect(fits).toMatchObject({ truncated: false, code: 0, stdout: 'z'.repeat(1000) });
  });

  it('drops a cut multi-byte character instead of showing half of it', async () => {
    const res = await sh('printf "ééééé"; printf "ééééé" >&2', { maxOutputBytes: 5, keepStderr: 'end', onOverflow: 'drop' });
    expect(res.stdout).toBe('éé');
    expect(res.stderr).toBe('éé');
    expect(res.truncated).toBe(true);
  });

  it('lets a program run on past the cap when asked, keeping the last stderr bytes and passing every stdout line', async () => {
    const lines: string[] = [];
    const res = await sh('seq 1 1000; seq 1 2000 >&2; printf "tail\\r\\nlast"', {
      maxOutputBytes: 10,
      maxStderrBytes: 20,
      keepStderr: 'end',
      onOverflow: 'drop',
      onStdoutLine: (line) => lines.push(line),
    });
    expect(res).toMatchObject({ code: 0, truncated: true, stdout: '1\n2\n3\n4\n5\n' });
    expect(res.stoppedBy).toBeUndefined();
    expect(res.stderr).toBe('1997\n1998\n1999\n2000\n');
    expect(lines).toHaveLength(1002);
    expect(lines.slice(-3)).toEqual(['1000', 'tail', 'last']);
  });

  it('stops the program when the call is aborted, and starts nothing for an aborted call', async () => {
    const m = marker();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const res = await sh(`sleep ${m} & sleep ${m}`, { signal: controller.signal, timeoutMs: 20_000 });
    expect(res).toMatchObject({ stoppedBy: 'abort', timedOut: false, signal: 'SIGTERM' });
    expect(res.durationMs).toBeLessThan(5000);
    await settle();
    expect(running(`sleep ${m}`)).toEqual([]);

    const out = fs.mkdtempSync(path.join(dir, 'aborted-'));
    const before = await sh(`echo ran > ${out}/ran`, { signal: AbortSignal.abort(), policy: { ...policy, writable: [out] } });
    expect(before).toMatchObject({ stoppedBy: 'abort', code: null, stdout: '' });
    await settle();
    expect(fs.existsSync(path.join(out, 'ran'))).toBe(false);
    // the same call not aborted does write, so the check above can fail
    await sh(`echo ran > ${out}/ran`, { policy: { ...policy, writable: [out] } });
    expect(fs.readFileSync(path.join(out, 'ran'), 'utf8')).toBe('ran\n');
  });

  it('rejects with spawn’s ENOENT for a program that is not there', async () => {
    await expect(runInSandbox(sandbox, 'no-such-program-here', [], { policy, maxOutputBytes: 10 })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('runInSandbox when no sandbox can be made', () => {
  it('rejects NOT_CONFIGURED and starts nothing', async () => {
    const sandbox = Sandbox.open({ ...config, SANDBOX_BWRAP: '/nonexistent/bwrap' });
    const err = await runInSandbox(sandbox, 'true', [], { policy, maxOutputBytes: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'NOT_CONFIGURED' });
  });
});

describe('runToCompletion (real bubblewrap)', () => {
  const sandbox = Sandbox.open(config);
  const base = { confinement: { sandbox, readOnly: [dir] }, maxOutputBytes: 1024, notInstalled: 'install it', cancelled: 'Cancelled.' };

  it('resolves a non-zero exit with its output, in / with the program environment', async () => {
    const res = await runToCompletion('sh', ['-c', 'pwd; echo "$PATH|$LANG"; echo bad >&2; exit 2'], base);
    expect(res).toEqual({ code: 2, stdout: '/\n/usr/local/bin:/usr/bin:/bin|C.UTF-8\n', stderr: 'bad\n' });
  });

  it('rejects TIMEOUT at the time limit, having killed the program', async () => {
    const m = marker();
    const err = await runToCompletion('sh', ['-c', `sleep ${m} & sleep ${m}`], { ...base, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'sh did not finish within 300 ms; it was stopped.' });
    await settle();
    expect(running(`sleep ${m}`)).toEqual([]);
  });

  it('rejects with the abort reason, or TIMEOUT with its own words when the reason is no error', async () => {
    const reason = new Error('the client went away');
    const withReason = new AbortController();
    setTimeout(() => withReason.abort(reason), 200);
    await expect(runToCompletion('sleep', ['20'], { ...base, signal: withReason.signal })).rejects.toBe(reason);
    await expect(runToCompletion('sleep', ['20'], { ...base, signal: AbortSignal.abort('because') })).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'Cancelled.',
    });
  });

  it('rejects NOT_CONFIGURED with what to install for a missing program', async () => {
    await expect(runToCompletion('no-such-engine', [], base)).rejects.toMatchObject({ code: 'NOT_CONFIGURED', message: 'install it' });
  });
});
