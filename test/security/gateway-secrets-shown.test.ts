/**
 * Class: secrets shown (issue 33, item 7). A `${VAR}` expanded into an HTTP server's URL path
 * appeared in GET /services and in logs; a stdio child's stderr line (which may echo its expanded
 * environment) appeared in /services and in notifications to every session. Now a server's URL is
 * shown as its declared template (`http://host/${TOKEN}/mcp`, no userinfo, no query), the values
 * `${VAR}` put into its URL, headers, environment or arguments are masked in whatever the gateway
 * says about it (errors to callers, /services, the status page, its log lines), and a child's stderr
 * stays in the operator's log: clients learn only that there was some.
 *
 * Malicious servers: HTTP (both eras) whose errors quote the URL they were called at, stdio (both
 * eras) that print their environment to stderr and die; the official SDK client as the victim.
 */
import path from 'node:path';
import { captureLogger, tempDir } from '@mcp-fleet/testing';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startMaliciousServer, type Behaviour, type MaliciousServer } from './fixtures/malicious-catalog-server';
import { SERVER_FILE, startCatalogGateway, stdioEntry, until, victim, type CatalogGateway } from './fixtures/catalog-gateway';

const tmp = tempDir('mcp-fleet-secrets-');
const SECRETS = {
  PATH_TOKEN: 'path-token-6c1f09ab',
  QUERY_KEY: 'query-key-2f77e1c0',
  USER_NAME: 'user-name-93d2',
  USER_PASS: 'pass-word-a81e55',
  HEADER_TOKEN: 'header-token-0b9a4c',
  // a value the URL carries percent-encoded
  SPACED_TOKEN: 'spaced token/6d0e',
  CHILD_API_KEY: 'child-api-key-5e3b71d2',
  CHILD_ARG: 'child-arg-secret-7a0c',
  // written into an entry as they are, not as ${VAR}: a database URL's password, a credential flag, a token variable
  LITERAL_URL_PASS: 'literal-pass-4c2e9d',
  LITERAL_FLAG: 'literal-flag-key-9f3a',
  LITERAL_ENV: 'literal-env-key-77b1',
};
const STDERR_TEXT = 'config loaded from /opt/evil/settings.yml';
const log = captureLogger('gateway');

let http2025: MaliciousServer;
let http2026: MaliciousServer;
let g: CatalogGateway;

const leaky = (era: '2025' | '2026'): Behaviour => ({
  era,
  leakUrl: true,
  tools: [{ name: 'leak' }, { name: 'leak_result' }, { name: 'fine' }],
});
const ARGS = ['--import', 'tsx', SERVER_FILE];
/** 2025: dies when its tool `die` is called; 2026 (started again by every request): dies at once, each time. */
const dying = (era: '2025' | '2026'): Behaviour => ({
  era,
  stderr: [STDERR_TEXT],
  stderrEnv: ['API_KEY'],
  tools: [{ name: 'die' }],
  ...(era === '2026' ? { exitAfterMs: 0 } : {}),
});

beforeAll(async () => {
  http2025 = await startMaliciousServer(leaky('2025'));
  http2026 = await startMaliciousServer(leaky('2026'));
  const base = (url: string) => new URL(url).host;
  g = await startCatalogGateway(
    path.join(tmp.dir, 'gw'),
    {
      mcpServers: {
        old: {
          url: `http://\${USER_NAME}:\${USER_PASS}@${base(http2025.url)}/\${PATH_TOKEN}/mcp?key=\${QUERY_KEY}`,
          headers: { Authorization: 'Bearer ${HEADER_TOKEN}' },
        },
        modern: { url: `http://${base(http2026.url)}/x/\${SPACED_TOKEN}/mcp`, protocolVersion: '2026-07-28' },
        'dying-old': stdioEntry(dying('2025'), { env: { API_KEY: '${CHILD_API_KEY}' }, args: [...ARGS, '--token=${CHILD_ARG}'] }),
        'dying-modern': stdioEntry(dying('2026'), { env: { API_KEY: '${CHILD_API_KEY}' }, args: [...ARGS, '--token=${CHILD_ARG}'] }),
        // as server-postgres's README runs it: the password in the argument's URL
        literal: stdioEntry(
          { ...dying('2025'), stderrArgs: true },
          {
            env: { API_KEY: SECRETS.LITERAL_ENV },
            args: [...ARGS, `postgresql://app:${SECRETS.LITERAL_URL_PASS}@db.invalid/x`, '--api-key', SECRETS.LITERAL_FLAG],
          },
        ),
      },
      env: SECRETS,
      logger: log.logger,
      overrides: { MCP_RESTART_BACKOFF_MS: '60000' },
    },
    (gw) => ['old', 'modern', 'dying-old', 'literal'].every((id) => gw.registry.get(id)!.healthy),
  );
}, 60_000);

afterAll(async () => {
  await g.stop();
  await http2025.stop();
  await http2026.stop();
  tmp.cleanup();
});

/** No secret value in any spelling: as is, URL-encoded, or as the URL parser writes it. */
function expectNoSecret(where: string, text: string): void {
  for (const [name, value] of Object.entries(SECRETS))
    for (const spelling of new Set([value, encodeURIComponent(value), encodeURI(value)]))
      expect([where, name, text.includes(spelling)]).toEqual([where, name, false]);
}

/** The tool called over REST (the native POST /mcp): its answer's text. */
async function restCall(tool: string): Promise<string> {
  const res = await fetch(`${g.url}/mcp`, {
    method: 'POST',
    body: JSON.stringify({ tool, arguments: {} }),
    headers: { 'content-type': 'application/json' },
  });
  return res.text();
}

it('the servers get their secrets (the URL, headers and environment work)', async () => {
  const client = await victim(g.url);
  expect(JSON.stringify((await client.callTool({ name: 'old__fine', arguments: {} })).content)).toContain('fine ran');
  expect(JSON.stringify((await client.callTool({ name: 'modern__fine', arguments: {} })).content)).toContain('fine ran');
  await client.close();
});

it('/services, the status page and the debug views show the declared templates, never the values', async () => {
  const services = (await (await fetch(`${g.url}/services`)).json()) as { services: Record<string, any>[] };
  const byId = Object.fromEntries(services.services.map((s) => [s.id, s]));
  expect(byId.old.url).toBe(`http://${new URL(http2025.url).host}/\${PATH_TOKEN}/mcp`);
  expect(byId.modern.url).toBe(`http://${new URL(http2026.url).host}/x/\${SPACED_TOKEN}/mcp`);
  expect(byId['dying-old'].url).toMatch(/^stdio:.*malicious-catalog-server\.ts --token=\$\{CHILD_ARG\}$/);
  expect(byId.literal.url).toMatch(/^stdio:.*malicious-catalog-server\.ts postgresql:\/\/app:\*\*\*@db\.invalid\/x --api-key \*\*\*$/);
  for (const route of ['/services', '/', '/debug/cache', '/health', '/mcp/schema', '/modes'])
    expectNoSecret(route, await (await fetch(`${g.url}${route}`)).text());
});

it('a server’s errors that quote its URL reach callers with the values masked (both eras, REST and MCP)', async () => {
  const client = await victim(g.url);
  for (const tool of ['old__leak', 'modern__leak']) {
    // the server's JSON-RPC error, passed on as it answered it (issue 29), its values masked, data included
    const answer = await client.callTool({ name: tool, arguments: {} }).catch((err: unknown) => err);
    expect(answer).toBeInstanceOf(McpError);
    const text = JSON.stringify({ message: (answer as McpError).message, data: (answer as McpError).data ?? null });
    expect(text).toMatch(/internal error while serving \/.*\*\*\*/);
    expect(text).toMatch(/"data":\{"request":\{"url":".*\*\*\*/);
    expectNoSecret(tool, text);
    const rest = await restCall(tool);
    expect(rest).toMatch(/UPSTREAM_ERROR/);
    expectNoSecret(`${tool} (REST)`, rest);
  }
  await client.close();
});

it('a server’s tool error (isError) that quotes its URL reaches callers with the values masked, its result kept (both eras, REST and MCP)', async () => {
  const client = await victim(g.url);
  for (const tool of ['old__leak_result', 'modern__leak_result']) {
    // the tool's own result, passed on as it sent it (its content and structuredContent), its values masked
    const answer = (await client.callTool({ name: tool, arguments: {} })) as {
      content: { text: string }[];
      structuredContent: unknown;
      isError: boolean;
    };
    expect(answer.isError).toBe(true);
    expect(answer.content[0].text).toMatch(/^could not fetch \/.*\*\*\*/);
    expect(answer.structuredContent).toEqual({ url: expect.stringContaining('***') });
    expectNoSecret(tool, JSON.stringify(answer));
    const rest = await restCall(tool);
    expect(rest).toMatch(/UPSTREAM_ERROR/);
    expect(rest).toMatch(/could not fetch/);
    expectNoSecret(`${tool} (REST)`, rest);
  }
  await client.close();
});

it('a stdio child that prints its environment to stderr and dies: clients see that it exited, not what it wrote; the operator’s log has the lines, masked', async () => {
  const client = await victim(g.url);
  const heard: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push(n.params));
  // open the session's GET stream so the gateway's notices reach it
  await client.setLoggingLevel('debug');
  await client.callTool({ name: 'dying-old__die', arguments: {} });
  await until(
    'both children to be seen unhealthy',
    async () => {
      await g.gw.refresh();
      return /exited/.test(g.gw.registry.get('dying-old')!.reason ?? '') && !g.gw.registry.get('dying-modern')!.healthy;
    },
    20_000,
  );
  await until('the session to be told', () => heard.length >= 1);
  const services = await (await fetch(`${g.url}/services`)).text();
  const reasons = (JSON.parse(services) as { services: { id: string; reason?: string }[] }).services
    .filter((s) => s.id.startsWith('dying-'))
    .map((s) => s.reason ?? '');
  expect(reasons).toEqual([
    expect.stringMatching(/the process exited \(\d+ lines? on its stderr: see the gateway's log\)/),
    expect.stringMatching(/did not answer server\/discover/),
  ]);
  for (const [where, text] of [
    ['/services', services],
    ['notifications', JSON.stringify(heard)],
    ['status page', await (await fetch(`${g.url}/`)).text()],
  ]) {
    expect([where, text.includes(STDERR_TEXT)]).toEqual([where, false]);
    expectNoSecret(where, text);
  }
  // a call to it says it is down, without the stderr either
  const answer = JSON.stringify(await client.callTool({ name: 'dying-old__die', arguments: {} }));
  expect(answer).toMatch(/UPSTREAM_UNAVAILABLE/);
  expect(answer.includes(STDERR_TEXT)).toBe(false);
  expectNoSecret('call', answer);
  await client.close();
  // the operator's log keeps the lines (the secret values masked even there)
  const lines = log.lines.join('\n');
  expect(lines).toContain(STDERR_TEXT);
  expect(lines).toContain('API_KEY=***');
  expectNoSecret('the log', lines);
}, 60_000);

it('credentials written into an entry as they are (not as ${VAR}) are masked as ${VAR} values are: /services, errors, the log', async () => {
  const client = await victim(g.url);
  // the server got them (it prints its arguments and API_KEY to stderr; the log below has the lines)
  await client.callTool({ name: 'literal__die', arguments: {} });
  await until(
    'it to be seen exited',
    async () => {
      await g.gw.refresh();
      return /exited/.test(g.gw.registry.get('literal')!.reason ?? '');
    },
    20_000,
  );
  const answer = JSON.stringify(await client.callTool({ name: 'literal__die', arguments: {} }));
  expect(answer).toMatch(/UPSTREAM_UNAVAILABLE/);
  await client.close();
  for (const [where, text] of [
    ['call', answer],
    ['/services', await (await fetch(`${g.url}/services`)).text()],
    ['status page', await (await fetch(`${g.url}/`)).text()],
  ])
    expectNoSecret(where, text);
  const lines = log.lines.join('\n');
  expect(lines).toContain('started with postgresql://app:***@db.invalid/x --api-key ***');
  expect(lines).toMatch(/API_KEY=\*\*\*/);
  expectNoSecret('the log', lines);
}, 60_000);
