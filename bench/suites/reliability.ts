/**
 * `pnpm bench reliability`: the fleet under faults and over time, through the real launcher.
 *
 * 1. Faults under load. config-mcp is reached by the gateway through a fault-injecting proxy that is
 *    switched between pass-through, down (connections reset), hung (never answers), slow (1.5 s) and
 *    garbage (200 with a non-JSON body), while 16 connections keep calling healthy services. For each
 *    fault: how fast and with which code calls to the faulty service fail once the gateway has
 *    noticed, whether its tools left the catalog and came back, and whether the healthy traffic
 *    lost anything.
 * 2. Soak: BENCH_SOAK_MS (default 5 minutes) at 64 connections through the gateway (half native
 *    calls, half MCP tools/call in one session), with the gateway's heap sampled every 10 s.
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { startFleet, type FleetHandle } from '../../test/support/fleet-process';
import { markdownTable, percentile } from '../lib';

type Mode = 'pass' | 'down' | 'hung' | 'slow' | 'garbage';

/** An HTTP proxy in front of one service whose behaviour the bench switches. */
async function faultProxy(target: () => string): Promise<{ url: string; set(m: Mode): void; close(): Promise<void> }> {
  let mode: Mode = 'pass';
  const hung = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (mode === 'down') return req.socket.destroy();
    if (mode === 'hung') {
      hung.add(res);
      res.on('close', () => hung.delete(res));
      return;
    }
    if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<<<not json at all');
    const forward = () => {
      if (!target()) return void res.writeHead(503).end();
      const up = http.request(target() + req.url, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (mode === 'slow') setTimeout(forward, 1500);
    else forward();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set: (m) => {
      mode = m;
      if (m !== 'hung') for (const r of hung) r.destroy();
    },
    close: () =>
      new Promise((r) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface Tally {
  latencies: number[];
  codes: Record<string, number>;
}

async function callLoop(pool: Pool, body: string, until: () => boolean, tally: Tally, headers: Record<string, string> = {}) {
  while (!until()) {
    const t0 = performance.now();
    let code = 'ok';
    try {
      const res = await pool.request({ method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', ...headers }, body });
      const text = await res.body.text();
      const json = JSON.parse(text) as { success?: boolean; code?: string; error?: unknown; result?: { isError?: boolean } };
      if (json.success === false) code = json.code ?? 'error';
      else if (json.error) code = 'jsonrpc-error';
      else if (json.result?.isError) code = 'isError';
    } catch (err) {
      code = `transport: ${(err as Error).message.slice(0, 40)}`;
    }
    tally.latencies.push(performance.now() - t0);
    tally.codes[code] = (tally.codes[code] ?? 0) + 1;
  }
}

const CONFIG_TOOL = JSON.stringify({ tool: 'env_vars', arguments: {} });
const HEALTHY = [JSON.stringify({ tool: 'system_info', arguments: {} }), JSON.stringify({ tool: 'file_list', arguments: { path: '.' } })];

async function inCatalog(fleet: FleetHandle, tool: string): Promise<boolean> {
  const res = await fetch(`${fleet.gateway}/tools/list`);
  const body = (await res.json()) as { tools: { name: string }[] };
  return body.tools.some((t) => t.name === tool);
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const phaseMs = Math.max(4000, options.durationMs * 2);
  const soakMs = Number(process.env.BENCH_SOAK_MS ?? 300_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-reliability-'));
  fs.mkdirSync(path.join(tmp, 'ws'));
  fs.writeFileSync(path.join(tmp, 'ws', 'a.txt'), 'hello\n');
  // The proxy learns config-mcp's real port once the fleet (with its random offset) is up.
  let target = '';
  const live = await faultProxy(() => target);
  const fleet = await startFleet({
    dataDir: path.join(tmp, 'data'),
    workspace: path.join(tmp, 'ws'),
    only: ['system-mcp', 'filesystem-mcp', 'config-mcp'],
    env: { CONFIG_MCP_URL: live.url, HEALTH_POLL_MS: '250', DOWNSTREAM_TIMEOUT_MS: '1000', LOG_LEVEL: 'warn', FLEET_RESTART: '0' },
  });
  target = fleet.serviceUrl('config-mcp', 7009);
  const faults: Record<string, unknown>[] = [];
  try {
    const pool = new Pool(fleet.gateway, { connections: 24 });
    let stop = false;
    const healthy: Tally = { latencies: [], codes: {} };
    const healthyLoops = Array.from({ length: 16 }, (_, i) => callLoop(pool, HEALTHY[i % 2], () => stop, healthy));
    for (const mode of ['down', 'hung', 'slow', 'garbage'] as Mode[]) {
      live.set('pass');
      await waitUntil(() => inCatalog(fleet, 'env_vars'), 15_000);
      const before = { ...healthy.codes };
      live.set(mode);
      const started = performance.now();
      let phaseOver = false;
      const early: Tally = { latencies: [], codes: {} };
      const late: Tally = { latencies: [], codes: {} };
      const faulty = Array.from({ length: 4 }, () =>
        callLoop(pool, CONFIG_TOOL, () => phaseOver, {
          get latencies() {
            return performance.now() - started < 1500 ? early.latencies : late.latencies;
          },
          get codes() {
            return performance.now() - started < 1500 ? early.codes : late.codes;
          },
        } as Tally),
      );
      let leftAfterMs: number | null = null;
      const watch = (async () => {
        while (!phaseOver) {
          if (leftAfterMs === null && !(await inCatalog(fleet, 'env_vars'))) leftAfterMs = Math.round(performance.now() - started);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      await new Promise((r) => setTimeout(r, phaseMs));
      phaseOver = true;
      await Promise.all([...faulty, watch]);
      live.set('pass');
      const recoverStart = performance.now();
      await waitUntil(() => inCatalog(fleet, 'env_vars'), 20_000);
      const rejoinedMs = Math.round(performance.now() - recoverStart);
      const sorted = [...late.latencies].sort((a, b) => a - b);
      const healthyErrors = Object.entries(healthy.codes)
        .filter(([c]) => c !== 'ok')
        .reduce((n, [c, v]) => n + v - (before[c] ?? 0), 0);
      faults.push({
        mode,
        earlyCodes: early.codes,
        codes: late.codes,
        failP50Ms: round(percentile(sorted, 50)),
        failP90Ms: round(percentile(sorted, 90)),
        leftCatalogAfterMs: leftAfterMs,
        rejoinedAfterMs: rejoinedMs,
        healthyErrors,
      });
      process.stdout.write(`reliability: ${mode}: ${JSON.stringify(faults.at(-1))}\n`);
    }
    stop = true;
    await Promise.all(healthyLoops);
    await pool.close();
    const healthyOk = healthy.codes.ok ?? 0;

    // Soak.
    const soak = await runSoak(fleet, soakMs);
    // Lowest heap sample (every second) in the first and last third of the soak: what survives the collections.
    const third = Math.floor(soak.fine.length / 3);
    const lows = third > 0 ? [Math.min(...soak.fine.slice(0, third)), Math.min(...soak.fine.slice(-third))] : undefined;
    const md = [
      '### Reliability (`pnpm bench reliability`)',
      '',
      `Faults injected between the gateway and config-mcp while 16 connections call system-mcp and filesystem-mcp (${healthyOk} healthy calls in all). ` +
        'Gateway: HEALTH_POLL_MS 250, DOWNSTREAM_TIMEOUT_MS 1000. "after detection" is from 1.5 s into the fault.',
      '',
      markdownTable(
        [
          'fault',
          'codes after detection',
          'fail p50 ms',
          'fail p90 ms',
          'left catalog after ms',
          'rejoined after ms',
          'healthy calls lost',
        ],
        faults.map((f) => [
          String(f.mode),
          Object.entries(f.codes as Record<string, number>)
            .map(([c, n]) => `${c} ${n}`)
            .join(', '),
          f.failP50Ms as number,
          f.failP90Ms as number,
          f.leftCatalogAfterMs === null ? 'stayed' : (f.leftCatalogAfterMs as number),
          f.rejoinedAfterMs as number,
          f.healthyErrors as number,
        ]),
      ),
      '',
      `Soak: ${Math.round(soakMs / 1000)} s at 64 connections (32 native, 32 MCP tools/call in one session): ${soak.calls} calls, ${soak.errors} errors, ` +
        `${soak.perSecond} calls/s. Gateway heap used: start ${mb(soak.heap[0])} MB, end ${mb(soak.heap.at(-1)!)} MB, max ${mb(Math.max(...soak.heap))} MB; ` +
        `rss start ${mb(soak.rss[0])} MB, end ${mb(soak.rss.at(-1)!)} MB (samples every 10 s: ${soak.heap.map(mb).join(', ')}).` +
        (lows
          ? ` The heap rises and falls between collections, so the leak figure is its low-water mark: lowest of the samples taken every second, in the first third ${mb(lows[0])} MB, in the last third ${mb(lows[1])} MB.`
          : ''),
    ].join('\n');
    return { json: { faults, healthyOk, soak: { ...soak, fine: undefined }, heapLows: lows }, markdown: md };
  } finally {
    await live.close();
    await fleet.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
const mb = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;

async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not met in time');
}

async function runSoak(fleet: FleetHandle, soakMs: number) {
  const pool = new Pool(fleet.gateway, { connections: 64 });
  // One MCP session for the JSON-RPC half.
  const init = await pool.request({
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
    }),
  });
  const session = String(init.headers['mcp-session-id']);
  await init.body.text();
  const rpcHeaders = { accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  await pool
    .request({
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', ...rpcHeaders },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    .then((r) => r.body.text());
  let id = 1;
  let stop = false;
  const tally: Tally = { latencies: [], codes: {} };
  const started = performance.now();
  const loops: Promise<void>[] = [];
  for (let i = 0; i < 32; i++) loops.push(callLoop(pool, HEALTHY[0], () => stop, tally));
  for (let i = 0; i < 32; i++)
    loops.push(
      (async () => {
        while (!stop) {
          const t0 = performance.now();
          let code = 'ok';
          try {
            const res = await pool.request({
              method: 'POST',
              path: '/mcp',
              headers: { 'content-type': 'application/json', ...rpcHeaders },
              body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'system_info', arguments: {} } }),
            });
            const json = JSON.parse(await res.body.text()) as { result?: { isError?: boolean }; error?: unknown };
            if (json.error || json.result?.isError) code = 'error';
          } catch {
            code = 'transport';
          }
          tally.latencies.push(performance.now() - t0);
          tally.codes[code] = (tally.codes[code] ?? 0) + 1;
        }
      })(),
    );
  const heap: number[] = [];
  const rss: number[] = [];
  const memory = async () =>
    ((await (await fetch(`${fleet.gateway}/memory/stats`)).json()) as { process: { heapUsed: number; rss: number } }).process;
  const sample = async () => {
    const m = await memory();
    heap.push(m.heapUsed);
    rss.push(m.rss);
  };
  await sample();
  // The heap every second too: its low-water marks (what survives the collections) show a leak
  // that the 10 s samples, taken anywhere in the rise and fall between collections, can hide.
  const fine: number[] = [];
  const fineLoop = (async () => {
    while (performance.now() - started < soakMs) {
      fine.push((await memory()).heapUsed);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  while (performance.now() - started < soakMs) {
    await new Promise((r) => setTimeout(r, Math.min(10_000, soakMs - (performance.now() - started))));
    await sample();
    process.stdout.write(`reliability: soak ${Math.round((performance.now() - started) / 1000)} s, ${tally.latencies.length} calls\n`);
  }
  stop = true;
  await Promise.all([...loops, fineLoop]);
  await pool.close();
  const calls = tally.latencies.length;
  return {
    calls,
    errors: calls - (tally.codes.ok ?? 0),
    codes: tally.codes,
    perSecond: Math.round(calls / ((performance.now() - started) / 1000)),
    heap,
    rss,
    fine,
  };
}
