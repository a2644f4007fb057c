/**
 * W3C trace context through the real fleet: a traceparent sent to the gateway reaches the service,
 * both export spans over OTLP/HTTP to a local receiver, the gateway span is the parent of the
 * service span, and the service's log lines of that request carry the trace id.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { serve, tempDir } from '@mcp-fleet/testing';
import { postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface Received {
  service: string;
  span: OtlpSpan;
}

describe('traces through the gateway', () => {
  const tmp = tempDir('mcp-fleet-tracing-');
  const received: Received[] = [];
  const paths: string[] = [];
  let receiver: Awaited<ReturnType<typeof serve>>;
  let fleet: FleetHandle;

  beforeAll(async () => {
    // A local OTLP/HTTP receiver: the JSON encoding the OpenTelemetry exporter sends to /v1/traces.
    receiver = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        const doc = JSON.parse(body) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue: string } }[] };
            scopeSpans: { spans: OtlpSpan[] }[];
          }[];
        };
        for (const rs of doc.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')!.value.stringValue;
          for (const ss of rs.scopeSpans) for (const span of ss.spans) received.push({ service, span });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const workspace = path.join(tmp.dir, 'ws');
    fs.mkdirSync(workspace);
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace,
      only: ['system-mcp'],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, LOG_LEVEL: 'debug' },
    });
    // The gateway may not have polled system-mcp yet when the launcher says ready.
    await waitFor(
      'system-mcp in the catalog',
      async () => {
        const res = await fetch(`${fleet.gateway}/tools/list`);
        return ((await res.json()) as { tools: { name: string }[] }).tools.some((t) => t.name === 'system_info');
      },
      20_000,
    );
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await receiver?.stop();
    tmp.cleanup();
  });

  it('makes the gateway span the parent of the service span, in the caller trace, on both transports', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const native = await postJson(
      `${fleet.gateway}/mcp`,
      { tool: 'system_info', arguments: {} },
      { traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(native.body.success).toBe(true);
    const rpcTrace = 'a'.repeat(31) + '1';
    const rpc = await postJson(
      `${fleet.gateway}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'system_info', arguments: {} } },
      { traceparent: `00-${rpcTrace}-${'b'.repeat(16)}-01`, accept: 'application/json, text/event-stream' },
    );
    expect(rpc.status).toBe(200);

    for (const [trace, parent] of [
      [traceId, callerSpan],
      [rpcTrace, 'b'.repeat(16)],
    ]) {
      const spans = await waitFor(
        `spans of trace ${trace} from both processes`,
        async () => {
          const mine = received.filter((r) => r.span.traceId === trace);
          return mine.some((r) => r.service === 'mega-orchestrator') && mine.some((r) => r.service === 'system-mcp') ? mine : undefined;
        },
        20_000,
      );
      const gateway = spans.filter((r) => r.service === 'mega-orchestrator');
      const service = spans.filter((r) => r.service === 'system-mcp');
      expect(gateway).toHaveLength(1);
      expect(service).toHaveLength(1);
      expect(gateway[0].span).toMatchObject({ name: 'tools/call system_info', parentSpanId: parent, kind: 2 });
      expect(service[0].span.parentSpanId).toBe(gateway[0].span.spanId);
      expect(service[0].span.name).toBe('POST /tools/call');
      const attr = (s: OtlpSpan, k: string) => s.attributes.find((a) => a.key === k)?.value;
      expect(attr(gateway[0].span, 'mcp_fleet.downstream')).toEqual({ stringValue: 'system-mcp' });
      expect(Number(attr(service[0].span, 'http.response.status_code')?.intValue)).toBe(200);
    }
    expect(paths.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);

    // Every log line the service wrote for that request carries the trace id.
    const log = fs.readFileSync(path.join(tmp.dir, 'data', 'logs', 'system-mcp.log'), 'utf8');
    const lines = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const toolLines = lines.filter((l) => l.message === 'tool call' && l.tool === 'system_info');
    expect(toolLines.length).toBeGreaterThanOrEqual(2);
    expect(toolLines.map((l) => l.trace_id)).toEqual(expect.arrayContaining([traceId, rpcTrace]));
  }, 60_000);

  it('starts a new trace when the caller sends none, and ignores a malformed traceparent', async () => {
    const before = new Set(received.map((r) => r.span.traceId));
    const res = await postJson(`${fleet.gateway}/mcp`, { tool: 'system_info', arguments: {} }, { traceparent: 'not-a-traceparent' });
    expect(res.body.success).toBe(true);
    const fresh = await waitFor(
      'a new trace',
      async () => {
        const news = received.filter((r) => !before.has(r.span.traceId) && r.service === 'mega-orchestrator');
        return news.length ? news : undefined;
      },
      20_000,
    );
    expect(fresh[0].span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh[0].span.parentSpanId ?? '').toBe('');
  }, 30_000);
});
