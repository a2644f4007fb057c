/**
 * The whole catalog in one tools/list page by default (issue 28 item 4): several clients never follow
 * nextCursor (MCP Inspector's CLI showed 100 of 107 tools). MCP_PAGE_SIZE still pages when set.
 */
import { defineTool } from '@mcp-fleet/kit';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { post2026, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

const TOOLS = 150;
const manyTools = () =>
  Array.from({ length: TOOLS }, (_, i) =>
    defineTool({
      name: `tool_${String(i).padStart(3, '0')}`,
      description: `Synthetic tool ${i}.`,
      input: z.object({ text: z.string().max(10).describe('Any text.') }).strict(),
      handler: (args) => args,
    }),
  );

let tmp: ReturnType<typeof tempDir>;
let many: Downstream;
let byDefault: RunningGateway;
let paged: RunningGateway;

beforeAll(async () => {
  tmp = tempDir();
  many = await startDownstream('many-mcp', manyTools);
  byDefault = await startGateway([{ id: 'many-mcp', url: many.url }], `${tmp.dir}/default`);
  paged = await startGateway([{ id: 'many-mcp', url: many.url }], `${tmp.dir}/paged`, { MCP_PAGE_SIZE: '100' });
});

afterAll(async () => {
  await byDefault.stop();
  await paged.stop();
  await many.stop();
  tmp.cleanup();
});

async function sessionPage(url: string, cursor?: string) {
  const client = new Client({ name: 'page-size-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    return await client.listTools(cursor ? { cursor } : undefined);
  } finally {
    await client.close();
  }
}

async function statelessPage(url: string, cursor?: string) {
  const res = await post2026(url, 'tools/list', cursor ? { cursor } : {});
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { tools: { name: string }[]; nextCursor?: string } }).result;
}

describe('tools/list page size', () => {
  it.each([
    ['a 2025-11-25 session', sessionPage],
    ['a 2026-07-28 stateless request', statelessPage],
  ])('answers the whole catalog in one page by default (%s)', async (_label, page) => {
    const first = await page(byDefault.url);
    expect(first.tools).toHaveLength(TOOLS);
    expect(first.nextCursor).toBeUndefined();
    expect(first.tools.map((t) => t.name)).toEqual(manyTools().map((t) => t.name));
  });

  it.each([
    ['a 2025-11-25 session', sessionPage],
    ['a 2026-07-28 stateless request', statelessPage],
  ])('pages by MCP_PAGE_SIZE when it is set (%s)', async (_label, page) => {
    const first = await page(paged.url);
    expect(first.tools).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await page(paged.url, first.nextCursor);
    expect(second.tools).toHaveLength(TOOLS - 100);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.tools, ...second.tools].map((t) => t.name)).toEqual(manyTools().map((t) => t.name));
  });
});
