/**
 * The real fleet, started by the launcher as separate processes: the gateway and the four
 * services of the spine, reached through the gateway (native and JSON-RPC), directly, and with the
 * official MCP SDK client; one service killed and restarted; hostile input everywhere.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { downstreamServices } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { getJson, isAlive, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

let fleet: FleetHandle;
let tmp: { dir: string; cleanup: () => void };
let workspace: string;
let outside: string;
const statuses: number[] = [];

const PORTS = { 'filesystem-mcp': 7001, 'git-mcp': 7002, 'terminal-mcp': 7003, 'system-mcp': 7007 } as const;
const direct = (id: keyof typeof PORTS) => fleet.serviceUrl(id, PORTS[id]);

async function native(tool: string, args: unknown, extra: Record<string, unknown> = {}) {
  const res = await postJson(`${fleet.gateway}/mcp`, { tool, arguments: args, ...extra });
  statuses.push(res.status);
  return res;
}

let rpcId = 0;
async function rpc(name: string, args: unknown) {
  const res = await postJson(`${fleet.gateway}/mcp`, {
    jsonrpc: '2.0',
    id: ++rpcId,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  statuses.push(res.status);
  return res;
}

beforeAll(async () => {
  tmp = tempDir('fleet-it-');
  workspace = path.join(tmp.dir, 'workspace');
  outside = path.join(tmp.dir, 'outside');
  fs.mkdirSync(path.join(workspace, 'repo'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'escape.txt'));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: path.join(workspace, 'repo') });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'it@example.com');
  git('config', 'user.name', 'IT');
  fs.writeFileSync(path.join(workspace, 'repo', 'README.md'), '# repo\n');
  git('add', '.');
  git('commit', '-qm', 'first');
  fleet = await startFleet({ dataDir: path.join(tmp.dir, 'data'), workspace, env: { FLEET_RESTART_BACKOFF_MS: '3000' } });
  await waitFor('gateway catalog with all four services', async () => {
    const { body } = await getJson(`${fleet.gateway}/tools/list`);
    const names: string[] = body.tools.map((t: { name: string }) => t.name);
    return ['file_read', 'git_status', 'execute_command', 'resource_monitor'].every((n) => names.includes(n));
  });
}, 120_000);

afterAll(async () => {
  if (fleet) {
    const pids = fleet.state().services.map((s) => s.pid);
    const code = await fleet.stop();
    expect(code).toBe(0);
    await waitFor('every service process to exit', async () => pids.every((p) => !isAlive(p)), 15_000);
  }
  tmp?.cleanup();
}, 60_000);

describe('the fleet through the launcher', () => {
  it('reports every service healthy in the launcher table and state file', () => {
    const text = fleet.output.join('');
    for (const id of [...Object.keys(PORTS), 'mega-orchestrator']) expect(text).toMatch(new RegExp(`${id}\\s+\\d+\\s+\\S+\\s+healthy`));
    expect(fleet.state().services.every((s) => s.state === 'healthy')).toBe(true);
  });

  it('lists the tools of the spine services through the gateway, with the collision qualified', async () => {
    const { body } = await getJson(`${fleet.gateway}/tools/list`);
    const names: string[] = body.tools.map((t: { name: string }) => t.name);
    for (const n of [
      'file_read',
      'file_write',
      'file_list',
      'file_search',
      'file_analyze',
      'git_status',
      'git_log',
      'git_diff',
      'git_commit',
      'git_push',
      'execute_command',
      'directory',
      'processes',
      'resource_monitor',
      'process_list',
      'disk_usage',
      'system_info',
    ]) {
      expect(names).toContain(n);
    }
    expect(names).toEqual(expect.arrayContaining(['system-mcp__system_info', 'terminal-mcp__system_info']));
    const plain = body.tools.find((t: { name: string }) => t.name === 'system_info');
    expect(plain.service).toBe('system-mcp');
  });

  it('calls a tool of each service natively, over JSON-RPC and directly', async () => {
    const w = await native(
      'file_write',
      { path: 'notes/hello.txt', content: 'hello fleet', createDirs: true },
      { session_id: 'it-session', context_id: 'ctx-1' },
    );
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({
      success: true,
      tool: 'file_write',
      service: 'filesystem-mcp',
      session_id: 'it-session',
      context_id: 'ctx-1',
    });
    expect(typeof w.body.durationMs).toBe('number');

    const r = await rpc('file_read', { path: 'notes/hello.txt' });
    expect(r.body.result.isError).toBe(false);
    expect(r.body.result.structuredContent.content).toBe('hello fleet');
    const d = await postJson(`${direct('filesystem-mcp')}/tools/file_read`, { path: 'notes/hello.txt' });
    expect(d.body).toMatchObject({ success: true, service: 'filesystem-mcp', result: { content: 'hello fleet' } });

    const gs = await native('git_status', { path: 'repo' });
    expect(gs.body.success).toBe(true);
    expect(gs.body.result.branch).toBe('main');
    expect((await rpc('git_log', { path: 'repo', limit: 5 })).body.result.structuredContent.commits[0].message).toBe('first');
    expect((await postJson(`${direct('git-mcp')}/tools/git_status`, { path: 'repo' })).body.result.branch).toBe('main');

    const ex = await native('execute_command', { command: 'echo through the gateway' });
    expect(ex.body.result).toMatchObject({ exitCode: 0 });
    expect(ex.body.result.stdout).toContain('through the gateway');
    expect((await rpc('execute_command', { command: 'echo rpc' })).body.result.structuredContent.stdout).toContain('rpc');
    expect((await postJson(`${direct('terminal-mcp')}/command`, { command: 'echo direct' })).body.result.stdout).toContain('direct');

    const si = await native('system_info', {});
    expect(si.body).toMatchObject({ success: true, service: 'system-mcp' });
    const tsi = await native('terminal-mcp__system_info', {});
    expect(tsi.body).toMatchObject({ success: true, service: 'terminal-mcp' });
    expect((await rpc('disk_usage', { path: '/' })).body.result.isError).toBe(false);
    expect((await postJson(`${direct('system-mcp')}/tools/system_info`, {})).body.result.node).toBe(process.version);

    const ctx = await getJson(`${fleet.gateway}/debug/contexts/it-session`);
    expect(ctx.status).toBe(200);
    expect(JSON.stringify(ctx.body)).toContain('file_write');
  });

  it('serves the official MCP SDK client over Streamable HTTP', async () => {
    const client = new Client({ name: 'fleet-it', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fleet.gateway}/mcp`)));
    const tools = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['file_read', 'git_status', 'execute_command', 'system_info']));
    const res = await client.callTool({ name: 'file_read', arguments: { path: 'notes/hello.txt' } });
    expect(res.isError).toBe(false);
    expect((res.structuredContent as { content: string }).content).toBe('hello fleet');
    const bad = await client.callTool({ name: 'file_read', arguments: { path: '../outside/secret.txt' } });
    expect(bad.isError).toBe(true);
    const health = await client.readResource({ uri: 'mega://health' });
    expect(health.contents[0].uri).toBe('mega://health');
    await client.close();
  });

  it('answers hostile input with documented codes and never a 500', async () => {
    const expectCode = (res: { status: number; body: any }, status: number, code: string) => {
      expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
    };
    expectCode(await native('file_read', { path: '../outside/secret.txt' }), 403, 'FORBIDDEN');
    expectCode(await native('file_read', { path: path.join(outside, 'secret.txt') }), 403, 'FORBIDDEN');
    expectCode(await native('file_read', { path: 'escape.txt' }), 403, 'FORBIDDEN');
    expectCode(await native('file_read', { path: 'notes/hello.txt\u0000.png' }), 400, 'VALIDATION_ERROR');
    expectCode(await native('file_read', { path: 42 }), 400, 'VALIDATION_ERROR');
    expectCode(await native('execute_command', { command: 'echo hi; cat /etc/passwd' }), 403, 'FORBIDDEN');
    expectCode(await native('execute_command', { command: 'echo $(id)' }), 403, 'FORBIDDEN');
    expectCode(await native('execute_command', { command: 'rm -rf /' }), 403, 'FORBIDDEN');
    expectCode(await native('git_log', { path: 'repo', ref: '--output=/tmp/pwned' }), 400, 'VALIDATION_ERROR');
    expectCode(await native('git_diff', { path: 'repo', commit1: '-c', commit2: 'HEAD' }), 400, 'VALIDATION_ERROR');
    expect(fs.existsSync('/tmp/pwned')).toBe(false);
    expectCode(await native('no_such_tool', {}), 404, 'UNKNOWN_TOOL');
    expectCode(await native('file_read', 'not-an-object'), 400, 'VALIDATION_ERROR');

    const malformed = await postJson(`${fleet.gateway}/mcp`, '{"tool": "file_read", ');
    statuses.push(malformed.status);
    expect(malformed.status).toBe(400);
    // a 2 MB file, which filesystem-mcp takes (BODY_LIMIT 8mb), is written through the gateway too
    // (its BODY_LIMIT is the fleet's largest: test/static/body-limits.test.ts); a body over that is refused
    const written = await postJson(`${fleet.gateway}/mcp`, {
      tool: 'file_write',
      arguments: { path: 'big.txt', content: 'x'.repeat(2 * 1024 * 1024) },
    });
    expect(written.status).toBe(200);
    const big = await postJson(`${fleet.gateway}/mcp`, {
      tool: 'file_write',
      arguments: { path: 'big.txt', content: 'x'.repeat(41 * 1024 * 1024) },
    });
    statuses.push(big.status);
    expectCode(big, 413, 'PAYLOAD_TOO_LARGE');
    const bigDirect = await postJson(`${direct('system-mcp')}/tools/system_info`, { padding: 'x'.repeat(2 * 1024 * 1024) });
    expectCode(bigDirect, 413, 'PAYLOAD_TOO_LARGE');

    const unknownRpc = await rpc('no_such_tool', {});
    expect(unknownRpc.body.error.code).toBe(-32602);
    const badMethod = await postJson(`${fleet.gateway}/mcp`, { jsonrpc: '2.0', id: 99, method: 'tools/explode' });
    expect(badMethod.body.error.code).toBe(-32601);

    expect(statuses.filter((s) => s >= 500 && s !== 503 && s !== 504)).toEqual([]);
    for (const s of fleet.state().services) expect(isAlive(s.pid)).toBe(true);
  });

  it('lists every tool of every built service and reaches each service through the gateway', async () => {
    const { body } = await getJson(`${fleet.gateway}/tools/list`);
    const listed = new Set(
      body.tools.map((t: { name: string; service: string }) => `${t.service}/${t.name.replace(`${t.service}__`, '')}`),
    );
    const missing = downstreamServices()
      .flatMap((s) => s.tools.map((t) => `${s.id}/${t}`))
      .filter((k) => !listed.has(k));
    expect(missing).toEqual([]);

    const ok = async (tool: string, args: unknown, service: string) => {
      const res = await native(tool, args);
      expect({ tool, status: res.status, service: res.body.service, error: res.body.error }).toEqual({
        tool,
        status: 200,
        service,
        error: undefined,
      });
      return res.body.result;
    };
    expect((await ok('db_query', { query: 'SELECT 1 + 1 AS two' }, 'database-mcp')).rows[0]).toEqual({ two: 2 });
    await ok('schema', { action: 'list' }, 'sql-mcp-wrapper');
    await ok('cache', { action: 'set', key: 'it-key', value: { n: 1 } }, 'cache-mcp-wrapper');
    expect((await ok('cache', { action: 'get', key: 'it-key' }, 'cache-mcp-wrapper')).value).toEqual({ n: 1 });
    await ok('collection', { action: 'create', name: 'it_vectors', size: 3, distance: 'Cosine' }, 'vector-mcp-wrapper');
    expect((await ok('semantic_similarity', { text_a: 'git commit', text_b: 'git commit' }, 'advanced-memory-mcp')).similarity).toBeCloseTo(
      1,
      5,
    );
    await ok('env_vars', { action: 'list' }, 'config-mcp');
    // log-mcp reads the fleet's own logs (the launcher writes them under DATA_DIR/logs).
    const logs = await ok('log_search', { query: 'git-mcp listening' }, 'log-mcp');
    expect(logs.matches.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs.matches[0])).toContain('git-mcp');
    await ok('password_hash', { password: 'correct horse battery staple' }, 'security-mcp');
    await ok('dns_lookup', { name: 'localhost', type: 'A' }, 'network-mcp');

    // The colliding memory names go to memory-mcp plain, and to each owner when qualified.
    const stored = await ok('store_memory', { content: 'the gateway routes colliding names to the primary owner' }, 'memory-mcp');
    expect(stored.memory.id).toEqual(expect.any(String));
    await ok('advanced-memory-mcp__store_memory', { content: 'vectorised through the qualified name' }, 'advanced-memory-mcp');
    const found = await ok('search_memories', { query: 'colliding names' }, 'memory-mcp');
    expect(JSON.stringify(found)).toContain('primary owner');
    const memStats = await getJson(`${fleet.gateway}/memory/stats`);
    expect(JSON.stringify(memStats.body)).toMatch(/"total":\s*[1-9]/);

    // Outbound requests refuse loopback unless allowlisted.
    const refused = await native('http_request', { url: `${fleet.gateway}/health` });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
  });

  it('answers hostile arguments to every tool in the catalog without a 500 or a crash', async () => {
    const { body } = await getJson(`${fleet.gateway}/tools/list`);
    const hostile: unknown[] = [
      '\u0000../../../etc/passwd',
      -1,
      1e308,
      { $gt: '' },
      [[['deep']]],
      '; rm -rf / #',
      '--upload-pack=touch /tmp/fuzz',
    ];
    const failures: string[] = [];
    let calls = 0;
    for (const tool of body.tools as { name: string; inputSchema: any }[]) {
      // a tool with actions lists one object whose required enum (action, operation) picks the fields: one variant per value
      const schema = tool.inputSchema;
      const selector = Object.entries<any>(schema.properties ?? {}).find(([k, p]) => schema.required?.includes(k) && Array.isArray(p.enum));
      const variants: Record<string, unknown>[] = selector
        ? selector[1].enum.map((value: unknown) => ({ properties: { ...schema.properties, [selector[0]]: { const: value } } }))
        : [schema];
      const payloads: Record<string, unknown>[] = [{}];
      for (const v of variants) {
        const fixed: Record<string, unknown> = {};
        for (const [k, p] of Object.entries<any>(v.properties ?? {})) if (p.const !== undefined) fixed[k] = p.const;
        for (const value of hostile) {
          const args: Record<string, unknown> = { ...fixed };
          for (const k of Object.keys(v.properties ?? {})) if (!(k in fixed)) args[k] = value;
          payloads.push(args);
        }
      }
      for (const args of payloads) {
        const res = await native(tool.name, args);
        calls++;
        if (res.status === 500 || res.status === 502 || typeof res.body !== 'object')
          failures.push(`${tool.name} ${JSON.stringify(args).slice(0, 80)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(body.tools.length * hostile.length);
    expect(fs.existsSync('/tmp/fuzz')).toBe(false);
    for (const s of fleet.state().services) expect({ id: s.id, alive: isAlive(s.pid) }).toEqual({ id: s.id, alive: true });
  }, 120_000);

  it('drops a killed service from the catalog, fails its calls fast, keeps the rest, and takes it back when the launcher restarts it', async () => {
    const fsState = fleet.state().services.find((s) => s.id === 'filesystem-mcp')!;
    // the gateway reaches filesystem-mcp's channel over its Unix socket in DATA_DIR/run (CHANNEL_SOCKET_DIR), owner-only
    const socket = path.join(tmp.dir, 'data', 'run', `channel-${new URL(direct('filesystem-mcp')).port}.sock`);
    const channelOf = async () => {
      const { body } = await getJson(`${fleet.gateway}/services`);
      return (body.services as { id: string; channel?: string }[]).find((x) => x.id === 'filesystem-mcp')?.channel;
    };
    expect((await native('file_list', { path: '.' })).body.success).toBe(true);
    // (a channel an earlier test's call closed opens again on a call a moment later)
    await waitFor('the channel over the socket', async () => {
      await native('file_list', { path: '.' });
      return (await channelOf()) === 'unix';
    });
    expect(fs.lstatSync(socket).isSocket()).toBe(true);
    expect(fs.lstatSync(socket).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
    process.kill(fsState.pid, 'SIGKILL');
    await waitFor('file_read to leave the catalog', async () => {
      const { body } = await getJson(`${fleet.gateway}/tools/list`);
      return !body.tools.some((t: { name: string }) => t.name === 'file_read');
    });
    const down = await native('file_read', { path: 'notes/hello.txt' });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('UPSTREAM_UNAVAILABLE');
    const services = await getJson(`${fleet.gateway}/services`);
    expect(JSON.stringify(services.body)).toContain('filesystem-mcp');
    expect((await native('system_info', {})).body.success).toBe(true);
    expect((await native('git_status', { path: 'repo' })).body.success).toBe(true);

    // The launcher restarts it after its backoff (FLEET_RESTART_BACKOFF_MS, long enough here to see it gone).
    await waitFor(
      'file_read to return to the catalog',
      async () => {
        const { body } = await getJson(`${fleet.gateway}/tools/list`);
        return body.tools.some((t: { name: string }) => t.name === 'file_read');
      },
      30_000,
    );
    const back = await native('file_read', { path: 'notes/hello.txt' });
    expect(back.body).toMatchObject({ success: true, result: { content: 'hello fleet' } });
    // the killed process's socket was stale; the new one replaced it, and the channel is over it again
    await waitFor('the channel over the new socket', async () => {
      await native('file_list', { path: '.' });
      return (await channelOf()) === 'unix';
    });
    // fleet.json is rewritten every 2 s.
    const again = await waitFor('the state file to show the restart', async () => {
      const s = fleet.state().services.find((x) => x.id === 'filesystem-mcp')!;
      return s.restarts === 1 && s.state === 'healthy' ? s : undefined;
    });
    expect(again.pid).not.toBe(fsState.pid);
    expect(fleet.output.join('')).toMatch(/filesystem-mcp exited with SIGKILL; restarting in \d+ ms/);
  }, 60_000);
});
