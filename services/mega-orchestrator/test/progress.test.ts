/**
 * MCP progress through the gateway: a client that sends a progressToken gets the downstream tool's
 * ctx.progress reports as notifications/progress (the answer becomes an event stream), then the
 * result; a client that sends none gets the plain JSON answer. The kit side streams NDJSON only
 * when asked.
 */
import request from 'supertest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AppError, createServiceApp, defineTool, type ServiceApp } from '@mcp-fleet/kit';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { startGateway, type RunningGateway } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('progress through the gateway', () => {
  const tmp = tempDir('mcp-fleet-progress-');
  let svc: ServiceApp;
  let down: Awaited<ReturnType<typeof serve>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    svc = createServiceApp({
      service: 'counter-mcp',
      config: testConfig,
      logger: testLogger('counter-mcp'),
      tools: [
        defineTool({
          name: 'count_up',
          description: 'Counts to steps, reporting each step as progress.',
          input: z
            .object({
              steps: z.number().int().min(1).max(20).describe('Steps.'),
              fail: z.boolean().default(false).describe('Fail at the end.'),
            })
            .strict(),
          handler: async ({ steps, fail }, ctx) => {
            for (let i = 1; i <= steps; i++) {
              await sleep(10);
              ctx.progress(i, steps, `step ${i}`);
            }
            if (fail) throw new AppError('CONFLICT', 'counted, then refused on purpose');
            return { counted: steps };
          },
        }),
      ],
    });
    down = await serve(svc.app);
    gateway = await startGateway([{ id: 'counter-mcp', url: down.url }], tmp.dir);
  });
  afterAll(async () => {
    await gateway.stop();
    down.server.closeAllConnections();
    await down.stop();
    await svc.close();
    tmp.cleanup();
  });

  it('streams NDJSON progress from a kit service only when asked, ending with the real status', async () => {
    const plain = await request(down.url).post('/tools/count_up').send({ steps: 2 }).expect(200);
    expect(plain.body.result).toEqual({ counted: 2 });
    const streamed = await request(down.url).post('/tools/count_up').set('x-progress', 'ndjson').send({ steps: 3 }).expect(200);
    expect(streamed.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = streamed.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.slice(0, 3)).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
    expect(lines[3]).toMatchObject({ status: 200, envelope: { success: true, result: { counted: 3 } } });
    const failed = await request(down.url).post('/tools/count_up').set('x-progress', 'ndjson').send({ steps: 1, fail: true });
    expect(failed.text.trim().split('\n').at(-1)).toMatch(/"status":409.*"code":"CONFLICT"/);
  });

  it('relays progress to an MCP client that sent a progressToken, then the result', async () => {
    const client = new Client({ name: 'progress-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    try {
      const seen: { progress: number; total?: number; message?: string }[] = [];
      const result = await client.callTool({ name: 'count_up', arguments: { steps: 4 } }, undefined, { onprogress: (p) => seen.push(p) });
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toEqual({ counted: 4 });
      expect(seen).toEqual([1, 2, 3, 4].map((i) => ({ progress: i, total: 4, message: `step ${i}` })));

      // a failure after progress is still the tool's error, with its code
      const failed = await client.callTool({ name: 'count_up', arguments: { steps: 2, fail: true } }, undefined, {
        onprogress: () => undefined,
      });
      expect(failed.isError).toBe(true);
      expect(failed.structuredContent).toMatchObject({ code: 'CONFLICT' });

      // no progressToken: the plain JSON answer
      const quiet = await client.callTool({ name: 'count_up', arguments: { steps: 2 } });
      expect(quiet.structuredContent).toEqual({ counted: 2 });
    } finally {
      await client.close();
    }
  });

  it('leaves native calls as they were', async () => {
    const res = await request(gateway.url)
      .post('/mcp')
      .send({ tool: 'count_up', arguments: { steps: 2 } })
      .expect(200);
    expect(res.body).toMatchObject({ success: true, result: { counted: 2 } });
  });
});
