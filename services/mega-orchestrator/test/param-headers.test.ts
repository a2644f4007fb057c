/**
 * Parameter headers (x-mcp-header, MCP 2026-07-28 / SEP-2243) through the gateway: a real gateway in
 * front of the stdio MCP fixture server, whose fx_route declares three parameter headers and whose
 * fx_bad_header declares one on an array. Hand-written requests for every rule, the official v2
 * client (which mirrors the arguments into Mcp-Param-* headers itself), and the official conformance
 * suite's server scenario for custom headers.
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { conformanceProblems, runConformanceScenario } from '@mcp-fleet/testing/conformance';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { decodeParamValue, mirroredParamHeaders, scanParamHeaders } from '../src/downstream/mcp/param-headers';
import { post2026, startGatewayWithStdioServer, type RunningGateway } from './helpers';

const V = '2026-07-28';
const FIXTURE = path.join(__dirname, 'fixtures', 'mcp-fixture-server.ts');
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;

let tmp: ReturnType<typeof tempDir>;
let g: RunningGateway;

async function call(args: Record<string, unknown>, headers: Record<string, string> = {}, name = 'fx_route') {
  const res = await post2026(g.url, 'tools/call', { name, arguments: args }, { headers });
  return { status: res.status, body: (await res.json()) as { result?: any; error?: { code: number; message: string; data?: any } } };
}

beforeAll(async () => {
  tmp = tempDir();
  g = await startGatewayWithStdioServer('fixture', FIXTURE, tmp.dir, 'fx_route');
}, 30_000);

afterAll(async () => {
  await g?.stop();
  tmp.cleanup();
});

describe('x-mcp-header declarations', () => {
  it('reads the declarations of a schema and names the first rule one breaks', () => {
    expect(
      scanParamHeaders({
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          target: { type: 'object', properties: { zone: { type: 'integer', 'x-mcp-header': 'Zone' } } },
        },
      }),
    ).toEqual({
      valid: true,
      headers: [
        { path: ['region'], name: 'Region', type: 'string' },
        { path: ['target', 'zone'], name: 'Zone', type: 'integer' },
      ],
    });
    const broken: [string, unknown, RegExp][] = [
      ['on an array', { properties: { a: { type: 'array', 'x-mcp-header': 'A' } } }, /string, integer or boolean/],
      ['untyped', { properties: { a: { 'x-mcp-header': 'A' } } }, /untyped/],
      ['empty', { properties: { a: { type: 'string', 'x-mcp-header': '' } } }, /header name token/],
      ['not a token', { properties: { a: { type: 'string', 'x-mcp-header': 'Two Words' } } }, /header name token/],
      [
        'twice, case-insensitively',
        { properties: { a: { type: 'string', 'x-mcp-header': 'Id' }, b: { type: 'string', 'x-mcp-header': 'ID' } } },
        /declared twice/,
      ],
      [
        'under items',
        { properties: { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } } },
        /reached through "properties"/,
      ],
      ['under anyOf', { anyOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] }, /reached through "properties"/],
      ['on the schema itself', { type: 'string', 'x-mcp-header': 'A' }, /reached through "properties"/],
    ];
    for (const [what, schema, reason] of broken) {
      const scan = scanParamHeaders(schema);
      expect({ what, valid: scan.valid }).toEqual({ what, valid: false });
      expect(scan.valid === false && scan.reason).toMatch(reason);
    }
  });

  it('decodes the Base64 sentinel strictly and passes other values through', () => {
    expect(decodeParamValue('=?base64?SGVsbG8=?=')).toBe('Hello');
    expect(decodeParamValue(b64('café 東京'))).toBe('café 東京');
    expect(decodeParamValue('SGVsbG8=')).toBe('SGVsbG8='); // no sentinel: literal
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined(); // padding missing
    expect(decodeParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined(); // not the alphabet
    expect(decodeParamValue('=?base64?/w==?=')).toBeUndefined(); // not UTF-8
  });

  it('encodes what the gateway sends a server: plain ASCII as it is, anything else in Base64, numbers and booleans as text, null left out', () => {
    const scan = scanParamHeaders({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        padded: { type: 'string', 'x-mcp-header': 'Padded' },
        city: { type: 'string', 'x-mcp-header': 'City' },
        lines: { type: 'string', 'x-mcp-header': 'Lines' },
        empty: { type: 'string', 'x-mcp-header': 'Empty' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        ratio: { type: 'number', 'x-mcp-header': 'Ratio' },
        debug: { type: 'boolean', 'x-mcp-header': 'Debug' },
        verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
        target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        lookalike: { type: 'string', 'x-mcp-header': 'Lookalike' },
        query: { type: 'string' },
      },
    });
    if (!scan.valid) throw new Error(scan.reason);
    const sent = mirroredParamHeaders(scan.headers, {
      region: 'us west 1',
      padded: ' us-west1',
      city: '東京',
      lines: 'a\r\nb',
      empty: '',
      priority: 42,
      ratio: 3.5,
      debug: false,
      verbose: null,
      target: { zone: 'b' },
      lookalike: '=?base64?SGVsbG8=?=',
      query: 'SELECT 1',
    });
    expect(sent).toEqual({
      'Mcp-Param-Region': 'us west 1',
      'Mcp-Param-Padded': b64(' us-west1'),
      'Mcp-Param-City': b64('東京'),
      'Mcp-Param-Lines': b64('a\r\nb'),
      'Mcp-Param-Empty': '',
      'Mcp-Param-Priority': '42',
      'Mcp-Param-Ratio': '3.5',
      'Mcp-Param-Debug': 'false',
      'Mcp-Param-Zone': 'b',
      // a plain value that looks like the sentinel is itself encoded, or it would be read as "Hello"
      'Mcp-Param-Lookalike': b64('=?base64?SGVsbG8=?='),
    });
    // what the gateway's own check (the server side) reads back is the argument
    for (const value of Object.values(sent)) expect(decodeParamValue(value)).not.toBeUndefined();
    expect(decodeParamValue(sent['Mcp-Param-City'])).toBe('東京');
    expect(decodeParamValue(sent['Mcp-Param-Lookalike'])).toBe('=?base64?SGVsbG8=?=');
  });
});

describe('tools/call with parameter headers (2026-07-28)', () => {
  it('lists fx_route with its declarations and leaves fx_bad_header out of both eras’ MCP lists (REST keeps it)', async () => {
    const res = await post2026(g.url, 'tools/list', {});
    const tools = ((await res.json()) as { result: { tools: { name: string; inputSchema: any }[] } }).result.tools;
    const route = tools.find((t) => t.name === 'fx_route');
    expect(route?.inputSchema.properties).toMatchObject({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
    });
    expect(tools.map((t) => t.name)).not.toContain('fx_bad_header');

    const old = new Client({ name: 'old', version: '1' });
    await old.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    const names = (await old.listTools()).tools.map((t) => t.name);
    expect(names).toContain('fx_route');
    expect(names).not.toContain('fx_bad_header');
    await old.close();

    const rest = (await (await fetch(`${g.url}/tools/list`)).json()) as { tools: { name: string }[] };
    expect(rest.tools.map((t) => t.name)).toContain('fx_bad_header');
  });

  it('calls the tool when every header agrees with its argument (trimmed, Base64, numbers and booleans)', async () => {
    const ok = await call(
      { region: 'eu-west', priority: 42, dryRun: true, note: 'not a header' },
      { 'mcp-param-region': '  eu-west ', 'Mcp-Param-Priority': '42.0', 'mcp-param-dry-run': 'true' },
    );
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.result.content[0].text)).toEqual({ region: 'eu-west', priority: 42, dryRun: true, note: 'not a header' });

    const unicode = await call({ region: 'café 東京' }, { 'mcp-param-region': b64('café 東京') });
    expect(unicode.status).toBe(200);
    expect(JSON.parse(unicode.body.result.content[0].text)).toEqual({ region: 'café 東京' });

    // Without the sentinel a Base64-looking value is the value itself.
    const literal = await call({ region: 'SGVsbG8=' }, { 'mcp-param-region': 'SGVsbG8=' });
    expect(literal.status).toBe(200);
    // A header for an argument that is not there is ignored.
    expect((await call({ region: 'x' }, { 'mcp-param-region': 'x', 'mcp-param-priority': '7' })).status).toBe(200);
  });

  it.each([
    ['a header is missing', { region: 'eu-west' }, {}, /Mcp-Param-Region header is missing/],
    ['a value differs', { region: 'eu-west' }, { 'mcp-param-region': 'us-east' }, /differs from arguments\.region/],
    ['values differ in case', { region: 'eu-west' }, { 'mcp-param-region': 'EU-WEST' }, /differs/],
    ['a number differs', { region: 'a', priority: 42 }, { 'mcp-param-region': 'a', 'mcp-param-priority': '43' }, /Mcp-Param-Priority/],
    ['a boolean differs', { region: 'a', dryRun: false }, { 'mcp-param-region': 'a', 'mcp-param-dry-run': 'False' }, /Mcp-Param-Dry-Run/],
    ['Base64 lacks its padding', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }, /not valid "=\?base64/],
    ['Base64 has foreign characters', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }, /not valid "=\?base64/],
  ])('refuses the call when %s: 400, -32020, the tool never called', async (_what, args, headers, message) => {
    const res = await call(args, headers as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(message), data: { mismatch: expect.any(Object) } });
    expect(res.body.result).toBeUndefined();
  });

  it('refuses a tool whose declarations are invalid with -32602 naming the reason', async () => {
    const res = await call({ tags: ['a'] }, { 'mcp-param-tags': 'a' }, 'fx_bad_header');
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/x-mcp-header declarations are invalid.*tags/) });
  });

  it('works with the official v2 client, which mirrors the arguments into the headers itself', async () => {
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const h = new Headers(init?.headers);
      if (h.get('mcp-method') === 'tools/call') sent.push(`${h.get('mcp-param-region')}|${h.get('mcp-param-priority')}`);
      return fetch(input, init);
    };
    // pinned to 2026-07-28 (parameter headers do not exist in the 2025 era); the cast keeps this test independent of the option's exact typing
    const client = new V2Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: V } } } as ConstructorParameters<
      typeof V2Client
    >[1]);
    await client.connect(new V2Transport(new URL(`${g.url}/mcp`), { fetch: recording }));
    await client.listTools();
    const result = await client.callTool({ name: 'fx_route', arguments: { region: 'ap-south', priority: 3 } });
    expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual({ region: 'ap-south', priority: 3 });
    expect(sent).toEqual(['ap-south|3']);
    await client.close();
  });

  it('passes the official conformance scenario for custom parameter headers', async () => {
    const checks = await runConformanceScenario(`${g.url}/mcp`, 'http-custom-header-server-validation', tmp.dir);
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThanOrEqual(5);
    expect(conformanceProblems(checks)).toEqual([]);
  }, 60_000);
});
