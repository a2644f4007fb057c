/**
 * Regression: MCP tool errors from toolkit-mcp-server (stdio) and mqtt-mcp (its own POST /mcp) had
 * another shape than every other service's: {code, message} as text (and no structuredContent from
 * mqtt-mcp) where the others answer the fleet's error envelope as structuredContent and as the text.
 * Each is called with the official SDK client, through the gateway and directly.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getService } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { getJson, REPO_ROOT, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

type Result = Awaited<ReturnType<Client['callTool']>>;
const ENVELOPE_KEYS = ['code', 'error', 'service', 'success', 'timestamp'];

/** The one shape: isError, the envelope as structuredContent, and the same envelope as the only text. */
function expectFleetError(r: Result, service: string, code: string) {
  expect(r.isError).toBe(true);
  const structured = r.structuredContent as Record<string, unknown>;
  expect(
    Object.keys(structured)
      .filter((k) => k !== 'details')
      .sort(),
  ).toEqual(ENVELOPE_KEYS);
  expect(structured).toMatchObject({ success: false, code, service, error: expect.any(String) });
  expect(new Date(structured.timestamp as string).getTime()).toBeGreaterThan(0);
  const content = r.content as { type: string; text: string }[];
  expect(content.map((c) => c.type)).toEqual(['text']);
  const text = JSON.parse(content[0].text) as Record<string, unknown>;
  expect(
    Object.keys(text)
      .filter((k) => k !== 'details')
      .sort(),
  ).toEqual(ENVELOPE_KEYS);
  expect({ success: text.success, code: text.code, service: text.service, error: text.error }).toEqual({
    success: false,
    code,
    service,
    error: structured.error,
  });
}

describe('MCP tool errors have one shape', () => {
  const tmp = tempDir('mcp-error-shape-');
  let fleet: FleetHandle;
  const clients: Client[] = [];

  const connect = async (transport: StreamableHTTPClientTransport | StdioClientTransport) => {
    const client = new Client({ name: 'error-shape-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace: path.join(tmp.dir, 'ws'),
      only: ['filesystem-mcp', 'mqtt-mcp'],
    });
    await waitFor('the toolkit in the catalog', async () =>
      ((await getJson(`${fleet.gateway}/tools/list`)).body.tools ?? []).some((t: { name: string }) => t.name === 'fileretrieve'),
    );
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close();
    await fleet?.stop();
    tmp.cleanup();
  });

  it('through the gateway: a kit service, the stdio toolkit and mqtt-mcp alike', async () => {
    const gateway = await connect(new StreamableHTTPClientTransport(new URL(`${fleet.gateway}/mcp`)));
    expectFleetError(await gateway.callTool({ name: 'file_read', arguments: { path: '../outside.txt' } }), 'filesystem-mcp', 'FORBIDDEN');
    expectFleetError(
      await gateway.callTool({ name: 'fileretrieve', arguments: { paths: ['/etc/passwd'] } }),
      'toolkit-mcp-server',
      'FORBIDDEN',
    );
    expectFleetError(
      await gateway.callTool({ name: 'publish_message', arguments: { topic: 'a/#', payload: 'x' } }),
      'mqtt-mcp',
      'VALIDATION_ERROR',
    );
  });

  it("directly: mqtt-mcp's POST /mcp and the toolkit over stdio", async () => {
    const mqtt = await connect(
      new StreamableHTTPClientTransport(new URL(`${fleet.serviceUrl('mqtt-mcp', getService('mqtt-mcp')!.port)}/mcp`)),
    );
    expectFleetError(
      await mqtt.callTool({ name: 'publish_message', arguments: { topic: 'a/#', payload: 'x' } }),
      'mqtt-mcp',
      'VALIDATION_ERROR',
    );
    expectFleetError(await mqtt.callTool({ name: 'list_messages', arguments: { limit: -1 } }), 'mqtt-mcp', 'VALIDATION_ERROR');

    const toolkit = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', path.join(REPO_ROOT, 'services/toolkit-mcp-server/src/server.ts')],
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: tmp.dir,
          WORKSPACE_ROOTS: path.join(tmp.dir, 'ws'),
          DATA_DIR: path.join(tmp.dir, 'toolkit-data'),
        },
        stderr: 'ignore',
      }),
    );
    expectFleetError(
      await toolkit.callTool({ name: 'fileretrieve', arguments: { paths: ['/etc/passwd'] } }),
      'toolkit-mcp-server',
      'FORBIDDEN',
    );
    expectFleetError(await toolkit.callTool({ name: 'fileretrieve', arguments: { paths: [] } }), 'toolkit-mcp-server', 'VALIDATION_ERROR');
  });
});
