/**
 * Class 1 (issue 27): a tricked agent drives terminal-mcp. Whatever gets past the argument checks,
 * the program runs in the OS sandbox: it cannot write or read outside the workspace roots, read the
 * fleet's stores or another process's environment, reach the network, or outlive the call. Each
 * attack is tried in several spellings against the real service and a real bubblewrap.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { Sandbox } from '../../packages/sandbox/src';
import { tempDir } from '@mcp-fleet/testing';
import { runProgram } from '../../services/media-mcp/src/media/engines';
import { buildApp, running, waitUntil } from '../../services/terminal-mcp/test/helpers';

const run = (service: ServiceApp, body: Record<string, unknown>) => request(service.app).post('/command').send(body);

const ws = tempDir('sec-sandbox-ws-');
const outside = tempDir('sec-sandbox-outside-');
const dataDir = path.join(ws.dir, '.data');
const target = path.join(outside.dir, 'pwned');
const secret = path.join(outside.dir, 'secret.txt');

beforeAll(() => {
  fs.mkdirSync(dataDir);
  fs.writeFileSync(path.join(dataDir, 'admin-token'), 'ADMIN-TOKEN-42\n');
  fs.writeFileSync(secret, 'OUTSIDE-SECRET-17\n');
  fs.writeFileSync(path.join(ws.dir, 'list.txt'), 'b\na\n');
});

afterAll(() => {
  ws.cleanup();
  outside.cleanup();
});

/** What a call did: refused by the allowlist (403), or ran in the sandbox (200 with its output). */
function outcome(res: request.Response): string {
  if (res.status === 403) return 'refused';
  expect(res.status).toBe(200);
  return `${res.body.result.stdout}\n${res.body.result.stderr}`;
}

describe('the default allowlist (no shell): options that write or start programs, in every spelling', () => {
  let service: ServiceApp;
  beforeAll(async () => {
    service = await buildApp(ws.dir, { DATA_DIR: dataDir });
  });
  afterAll(() => service.close());

  const writes = [
    `sort -o ${target} list.txt`,
    `sort -o${target} list.txt`,
    `sort -ro${target} list.txt`,
    `sort --output=${target} list.txt`,
    `sort --output ${target} list.txt`,
    `sort --outp=${target} list.txt`,
    `sort --o=${target} list.txt`,
    `sort --OUTPUT=${target} list.txt`,
    `sort -T ${outside.dir} -S 1 list.txt`,
    `uniq list.txt ${target}`,
    `uniq -c list.txt ${target}`,
  ];
  it.each(writes)('%s writes nothing outside the roots', async (command) => {
    const res = await run(service, { command });
    outcome(res);
    expect(fs.existsSync(target)).toBe(false);
  });

  const programs = [
    ['sort', '--compress-program=sh', '-S', '1', 'list.txt'],
    ['sort', '--compress-prog=sh', 'list.txt'],
    ['sort', '--comp=sh', 'list.txt'],
    ['date', '--set=2001-01-01'],
    ['date', '-s', '2001-01-01'],
    ['date', '-us2001-01-01'],
  ];
  it.each(programs)('%s %s is refused', async (program, ...args) => {
    const res = await run(service, { command: program, args });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  const reads = [
    `cat ${secret}`,
    `head -c 100 ${secret}`,
    `cat ${path.join(dataDir, 'admin-token')}`,
    `cat .data/admin-token`,
    `grep -r ADMIN .`,
    `cat /etc/shadow`,
    `cat /proc/1/environ`,
    `cat /proc/${process.pid}/environ`,
    `ls /root`,
    `cat ${process.env.HOME}/.bash_history`,
  ];
  it.each(reads)('%s reads nothing outside the roots or of the fleet', async (command) => {
    const text = outcome(await run(service, { command }));
    expect(text).not.toMatch(/OUTSIDE-SECRET-17|ADMIN-TOKEN-42|root:[^:]*:\d+:/);
    expect(text).not.toContain('JEST_WORKER_ID');
  });

  it('still does its job: reads and sorts inside the roots', async () => {
    const res = await run(service, { command: 'sort list.txt' }).expect(200);
    expect(res.body.result.stdout).toBe('a\nb\n');
  });
});

describe('an operator who allows any program and the shell: the sandbox still holds', () => {
  let service: ServiceApp;
  let server: http.Server;
  let port: number;
  // a service's channel socket, where ./fleet up puts them (CHANNEL_SOCKET_DIR = DATA_DIR/run)
  const channelSocket = path.join(dataDir, 'run', 'channel-7001.sock');
  let socketServer: http.Server;
  beforeAll(async () => {
    service = await buildApp(ws.dir, { DATA_DIR: dataDir, TERMINAL_ALLOWED_COMMANDS: '*', TERMINAL_ALLOW_SHELL: 'true' });
    server = http.createServer((_req, res) => res.end('REACHED-THE-NETWORK'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    fs.mkdirSync(path.dirname(channelSocket), { recursive: true, mode: 0o700 });
    socketServer = http.createServer((_req, res) => res.end('REACHED-THE-NETWORK'));
    await new Promise<void>((resolve) => socketServer.listen(channelSocket, resolve));
  });
  afterAll(async () => {
    await service.close();
    server.close();
    socketServer.close();
  });

  const escapes = [
    `echo pwned > ${target}`,
    `cp list.txt ${target}`,
    `sh -c 'echo pwned > ${target}'`,
    `node -e 'require("fs").writeFileSync("${target}", "x")'`,
    `ln -s ${outside.dir} escape && echo pwned > escape/pwned`,
    `cd / && echo pwned > ${target}`,
  ];
  it.each(escapes)('%s cannot write outside the roots', async (command) => {
    outcome(await run(service, { command }));
    expect(fs.existsSync(target)).toBe(false);
    fs.rmSync(path.join(ws.dir, 'escape'), { force: true });
  });

  const leaks = [
    `cat ${secret}`,
    `find / -name secret.txt -exec cat {} +`,
    'cat /proc/*/environ | tr "\\0" "\\n"',
    'for p in /proc/[0-9]*; do cat $p/environ; done',
    `cat .data/admin-token; ls -A .data`,
    'env',
    'ps aux',
  ];
  it.each(leaks)('%s leaks no secret of the host or the fleet', async (command) => {
    process.env.FLEET_TEST_SECRET = 'IN-THE-SERVICE-ENVIRONMENT';
    try {
      const text = outcome(await run(service, { command }));
      expect(text).not.toMatch(/OUTSIDE-SECRET-17|ADMIN-TOKEN-42|IN-THE-SERVICE-ENVIRONMENT|JEST_WORKER_ID/);
    } finally {
      delete process.env.FLEET_TEST_SECRET;
    }
  });

  const network = [
    `node -e 'fetch("http://127.0.0.1:PORT/").then(r=>r.text()).then(console.log,e=>console.log("refused"))'`,
    'bash -c "cat < /dev/tcp/127.0.0.1/PORT"',
    'curl -s http://127.0.0.1:PORT/',
    // the services' channel sockets (SOCKET: DATA_DIR/run/channel-7001.sock): a file, which a network
    // namespace does not hide; DATA_DIR is covered by an empty directory
    'curl -s --unix-socket SOCKET http://localhost/',
    'curl -s --unix-socket .data/run/channel-7001.sock http://localhost/',
    `node -e 'require("http").get({socketPath:"SOCKET",path:"/"},r=>r.pipe(process.stdout)).on("error",e=>console.log(e.code))'`,
  ];
  it.each(network)('%s reaches no network', async (command) => {
    const text = outcome(await run(service, { command: command.replace('PORT', String(port)).replace('SOCKET', channelSocket) }));
    expect(text).not.toContain('REACHED-THE-NETWORK');
  });

  it('would reach the channel socket without the sandbox (so the cases above test something)', async () => {
    // not execFileSync: this process answers on the socket
    const text = await new Promise<string>((resolve, reject) =>
      execFile('curl', ['-s', '--max-time', '10', '--unix-socket', channelSocket, 'http://localhost/'], (err, out) =>
        err ? reject(err) : resolve(out),
      ),
    );
    expect(text).toBe('REACHED-THE-NETWORK');
  });

  const lingering = [
    'sleep 41.101 &',
    'nohup sleep 41.102 > /dev/null 2>&1 &',
    'setsid sleep 41.103 &',
    '(sleep 41.104 &) ; echo started',
    `node -e 'require("child_process").spawn("sleep",["41.105"],{detached:true,stdio:"ignore"}).unref()'`,
  ];
  it.each(lingering)('%s leaves nothing running after the call', async (command) => {
    const marker = /41\.10\d/.exec(command)![0];
    await run(service, { command }).expect(200);
    expect(await waitUntil(() => running(`sleep ${marker}`).length === 0)).toBe(true);
  });

  it('still does its job: pipes and writes inside the roots', async () => {
    const res = await run(service, { command: 'sort list.txt | tee sorted.txt | wc -l' }).expect(200);
    expect(res.body.result.stdout.trim()).toBe('2');
    expect(fs.readFileSync(path.join(ws.dir, 'sorted.txt'), 'utf8')).toBe('a\nb\n');
  });
});

describe('no sandbox to be had', () => {
  it('refuses to run anything, says what to do, and the rest of the service answers', async () => {
    const service = await buildApp(ws.dir, { SANDBOX_BWRAP: '/nonexistent/bwrap' });
    try {
      const res = await run(service, { command: 'echo hi' }).expect(503);
      expect(res.body.code).toBe('NOT_CONFIGURED');
      expect(res.body.error).toMatch(/bubblewrap/);
      expect(res.body.error).toMatch(/SANDBOX=off/);
      const health = await request(service.app).get('/health');
      expect(health.body.checks.sandbox).toMatchObject({ status: 'error' });
      await request(service.app).get('/directory').expect(200);
    } finally {
      await service.close();
    }
  });
});

describe('media engines: a hostile media file or argument cannot make ffmpeg read outside the roots', () => {
  const media = tempDir('sec-sandbox-media-');
  const secretAudio = path.join(outside.dir, 'secret.wav');
  const sandbox = Sandbox.open({ SANDBOX: 'bwrap', SANDBOX_BWRAP: 'bwrap', SANDBOX_READ_ONLY_PATHS: [] });
  const confinement = { sandbox, readOnly: [media.dir], writable: [media.dir] };
  const ffmpeg = (args: string[]) => runProgram('ffmpeg', ['-nostdin', '-hide_banner', ...args], { confinement, timeoutMs: 20_000 });

  beforeAll(() => {
    execFileSync('ffmpeg', ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=d=0.3', secretAudio]);
    fs.copyFileSync(secretAudio, path.join(media.dir, 'inside.wav'));
  });
  afterAll(() => media.cleanup());

  const spellings: [string, () => string[]][] = [
    ['a plain path', () => ['-i', secretAudio, '-f', 'null', '-']],
    ['a file: URL', () => ['-i', `file:${secretAudio}`, '-f', 'null', '-']],
    [
      'a concat list in the workspace',
      () => {
        fs.writeFileSync(path.join(media.dir, 'list.ffconcat'), `ffconcat version 1.0\nfile '${secretAudio}'\n`);
        return ['-f', 'concat', '-safe', '0', '-i', path.join(media.dir, 'list.ffconcat'), '-f', 'null', '-'];
      },
    ],
    [
      'an HLS playlist in the workspace',
      () => {
        fs.writeFileSync(
          path.join(media.dir, 'play.m3u8'),
          `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile://${secretAudio}\n#EXT-X-ENDLIST\n`,
        );
        return ['-allowed_extensions', 'ALL', '-i', path.join(media.dir, 'play.m3u8'), '-f', 'null', '-'];
      },
    ],
    ['an output outside the roots', () => ['-i', path.join(media.dir, 'inside.wav'), path.join(outside.dir, 'copy.wav')]],
  ];
  it.each(spellings)('%s fails inside the sandbox', async (_name, args) => {
    const res = await ffmpeg(args());
    expect(res.code).not.toBe(0);
    expect(fs.existsSync(path.join(outside.dir, 'copy.wav'))).toBe(false);
  });

  it('still reads and writes inside the roots', async () => {
    const res = await ffmpeg(['-i', path.join(media.dir, 'inside.wav'), path.join(media.dir, 'copy.wav')]);
    expect(res.code).toBe(0);
    expect(fs.statSync(path.join(media.dir, 'copy.wav')).size).toBeGreaterThan(1000);
  });
});
