/**
 * Class: a server behind the gateway lists without bound (issue 33, item 4). A server that listed
 * 100,000 tools made a 63 MB catalog and status page, and the 5-second poll alone kept half a core
 * busy. Now each downstream's lists are capped (tools, prompts, resources; description and schema
 * size): the excess is refused, never served, and reported in GET /services and on the status page;
 * pages beyond the cap are not read; and a list that broke a cap is not read again for a while, so a
 * huge server costs its parse once in a while, not every poll.
 *
 * Malicious servers (test/security/fixtures/malicious-catalog-server.ts) over HTTP and stdio, both
 * protocol eras; the official SDK client as the victim, with authorization on and off; a real gateway
 * process measured (CPU time and RSS from /proc) while a server lists 100,000 tools.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startMaliciousServer, type MaliciousServer } from './fixtures/malicious-catalog-server';
import {
  httpEntry,
  REPO,
  sleep,
  startCatalogGateway,
  stdioEntry,
  toolNames,
  until,
  victim,
  type CatalogGateway,
} from './fixtures/catalog-gateway';

const tmp = tempDir('mcp-fleet-list-bounds-');
const servers: MaliciousServer[] = [];
const gateways: CatalogGateway[] = [];
const MB = 1024 * 1024;

afterAll(async () => {
  for (const g of gateways) await g.stop();
  for (const s of servers) await s.stop();
  tmp.cleanup();
});

async function server(behaviour: Parameters<typeof startMaliciousServer>[0]) {
  const s = await startMaliciousServer(behaviour);
  servers.push(s);
  return s;
}

async function gateway(
  name: string,
  options: Parameters<typeof startCatalogGateway>[1],
  ready?: Parameters<typeof startCatalogGateway>[2],
) {
  const g = await startCatalogGateway(path.join(tmp.dir, name), options, ready);
  gateways.push(g);
  return g;
}

const servicesOf = async (url: string, headers: Record<string, string> = {}) =>
  ((await (await fetch(`${url}/services`, { headers })).json()) as { services: Record<string, any>[] }).services;

describe('caps on what a server lists', () => {
  it('an HTTP 2025 server listing 5,000 tools (paged), a 1 MB description and a 1 MB schema: 1,000 served, the rest refused and reported', async () => {
    const evil = await server({
      era: '2025',
      pageSize: 100,
      tools: [
        { name: 'fine_tool', description: 'A tool that behaves.' },
        { name: 'huge_description', description: 'x'.repeat(MB) },
        { name: 'huge_schema', inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'y'.repeat(MB) } } } },
        { name: 'huge_title', title: 't'.repeat(9000) },
      ],
      bulkTools: 5000,
    });
    const g = await gateway('http-2025', { mcpServers: { evil: httpEntry(evil.url, {}) } }, (gw) => gw.registry.get('evil')!.healthy);
    // pages beyond the cap are not read: 1,000 tools in pages of 100 is 11 pages, not 51
    expect(evil.state.methods.filter((m) => m === 'tools/list').length).toBeLessThanOrEqual(12);

    const client = await victim(g.url);
    const names = await toolNames(client);
    expect(names.length).toBe(1000);
    expect(names).toContain('fine_tool');
    for (const refused of ['huge_description', 'huge_schema', 'huge_title', 'bulk_4999', 'announce']) expect(names).not.toContain(refused);
    // the legitimate tool still works
    const answer = await client.callTool({ name: 'fine_tool', arguments: {} });
    expect(answer.isError).toBeFalsy();
    expect(JSON.stringify(answer.content)).toContain('fine_tool ran on the malicious server');
    // a refused tool cannot be called either
    const refusedCall = await client.callTool({ name: 'huge_description', arguments: {} }).catch((err: Error) => ({ error: err.message }));
    expect(JSON.stringify(refusedCall)).toMatch(/huge_description/);
    expect(JSON.stringify(refusedCall)).not.toContain('ran on the malicious server');
    await client.close();

    const entry = (await servicesOf(g.url)).find((s) => s.id === 'evil')!;
    expect(entry.tools).toBe(1000);
    expect(entry.refused.tools.more).toBe(true);
    expect(entry.refused.tools.refused).toBeGreaterThanOrEqual(3 + 1);
    expect(entry.refused.tools.reasons.join('\n')).toMatch(/huge_description: a description of 1048576 bytes \(the cap is 8192\)/);
    expect(entry.refused.tools.reasons.join('\n')).toMatch(
      /huge_schema: a definition of \d+ bytes beyond its description \(the cap is 65536\)/,
    );
    expect(entry.refused.tools.reasons.join('\n')).toMatch(/huge_title: a description of 90\d\d bytes \(the cap is 8192\)/);
    expect(entry.refused.tools.reasons[0]).toMatch(/or more tools beyond the cap of 1000/);
    expect(entry.notice).toMatch(/refused \(over the caps\)/);
    // no description text of the server reaches /services or the status page
    const page = await (await fetch(`${g.url}/`)).text();
    expect(page).toMatch(/refused \(over the caps\)/);
    expect(page.length).toBeLessThan(2 * MB);
    expect(JSON.stringify(entry)).not.toContain('xxxxxxxx');
  });

  it('a stdio 2026-07-28 server, with its own limits from the mcpServers entry, behind a gateway with authorization on', async () => {
    const admin = newApiKey('reader', ['tools:all']);
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([admin.entry]));
    const auth = { authorization: `Bearer ${admin.key}` };
    const g = await gateway(
      'stdio-2026',
      {
        mcpServers: {
          evil: stdioEntry(
            { era: '2026', tools: [{ name: 'first_tool' }], bulkTools: 50, bulkPrompts: 10, bulkResources: 10 },
            { limits: { tools: 5, prompts: 2, resources: 3 } },
          ),
        },
        overrides: { API_KEYS_FILE: path.join(tmp.dir, 'keys.json') },
      },
      (gw) => gw.registry.get('evil')!.healthy,
    );
    const client = await victim(g.url, auth);
    expect(await toolNames(client)).toEqual(['first_tool', 'bulk_0', 'bulk_1', 'bulk_2', 'bulk_3']);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['bulk_prompt_0', 'bulk_prompt_1']);
    const resources = (await client.listResources()).resources.map((r) => r.uri).filter((u) => u.startsWith('evil://'));
    expect(resources).toEqual(['evil://bulk/0', 'evil://bulk/1', 'evil://bulk/2']);
    expect(JSON.stringify((await client.callTool({ name: 'bulk_3', arguments: {} })).content)).toContain('bulk_3 ran');
    await client.close();
    const entry = (await servicesOf(g.url, auth)).find((s) => s.id === 'evil')!;
    expect(entry.refused).toEqual({
      tools: { refused: 48, reasons: ['48 tools beyond the cap of 5'] },
      prompts: { refused: 8, reasons: ['8 prompts beyond the cap of 2'] },
      resources: { refused: 7, reasons: ['7 resources beyond the cap of 3'] },
    });
  }, 60_000);

  it('a list that broke a cap is not read again on every poll (HTTP 2026-07-28, one page of 20,000 tools); one within the caps is', async () => {
    const huge = await server({ era: '2026', bulkTools: 20_000 });
    const fine = await server({ era: '2026', tools: [{ name: 'small_tool' }] });
    const g = await gateway(
      'backoff',
      { mcpServers: { huge: httpEntry(huge.url, { era: '2026' }), fine: httpEntry(fine.url, { era: '2026' }) } },
      (gw) => gw.registry.get('huge')!.healthy && gw.registry.get('fine')!.healthy,
    );
    const hugeReads = huge.state.reads.tools;
    const fineReads = fine.state.reads.tools;
    for (let i = 0; i < 5; i++) await g.gw.refresh();
    expect(huge.state.reads.tools).toBe(hugeReads);
    expect(fine.state.reads.tools).toBe(fineReads + 5);
    // still healthy and serving what it was allowed, and it says when its lists are read again
    const entry = (await servicesOf(g.url)).find((s) => s.id === 'huge')!;
    expect(entry).toMatchObject({ status: 'healthy', tools: 1000 });
    expect(entry.notice).toMatch(/lists read again after \d{4}-/);
    const client = await victim(g.url);
    expect(JSON.stringify((await client.callTool({ name: 'bulk_999', arguments: {} })).content)).toContain('bulk_999 ran');
    await client.close();
  }, 60_000);
});

describe('the poll of a server listing 100,000 tools does not keep a core busy (real gateway process)', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
  const cpuSeconds = (pid: number) => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  };
  const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

  it('one read, then under 10% of a core while polled every second; RSS and the status page stay bounded', async () => {
    const evil = await server({ bulkTools: 100_000 });
    const port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'services', 'mega-orchestrator', 'src', 'server.ts')], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        DATA_DIR: path.join(tmp.dir, 'process'),
        LOG_LEVEL: 'error',
        STDIO_SERVERS: 'false',
        FLEET_SERVICES: 'system-mcp',
        HEALTH_POLL_MS: '1000',
        MCP_SERVERS: JSON.stringify({ evil: { url: evil.url } }),
      },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    const entry = await until(
      'the server to be healthy',
      async () =>
        (await fetch(`${url}/services`).then(
          async (r) =>
            ((await r.json()) as { services: Record<string, any>[] }).services.find((s) => s.id === 'evil' && s.status === 'healthy'),
          () => undefined,
        )) as Record<string, any> | undefined,
      60_000,
    );
    expect(entry.tools).toBe(1000);
    expect(entry.refused.tools.refused).toBe(99_002);
    const reads = evil.state.reads.tools;
    const cpu0 = cpuSeconds(child.pid!);
    const t0 = Date.now();
    let rss = 0;
    while (Date.now() - t0 < 8000) {
      rss = Math.max(rss, rssMb(child.pid!));
      await sleep(200);
    }
    const share = (cpuSeconds(child.pid!) - cpu0) / ((Date.now() - t0) / 1000);
    const page = await (await fetch(`${url}/`)).text();
    const services = await (await fetch(`${url}/services`)).text();
    // measured on the development machine: before, 4 list reads in 20 s at the default 5 s poll took 15% of a core,
    // RSS 552 MB and a 23 MB status page; now 0 reads, 1% of a core, RSS 248 MB, a 234 KB page
    expect(evil.state.reads.tools).toBe(reads);
    expect(share).toBeLessThan(0.1);
    expect(rss).toBeLessThan(450);
    expect(page.length).toBeLessThan(MB);
    expect(services.length).toBeLessThan(64 * 1024);
  }, 120_000);
});
