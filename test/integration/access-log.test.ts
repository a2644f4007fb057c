/**
 * Regression: a successful call left no line in its service's log at the default level, so the trace
 * id docs/observability.md promises there appeared nowhere. The real fleet at LOG_LEVEL=info: one
 * call through the gateway with a traceparent leaves one access line in the service's log file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

describe("a tool call's access line in the service's log", () => {
  const tmp = tempDir('access-log-');
  let fleet: FleetHandle;
  const dataDir = path.join(tmp.dir, 'data');

  beforeAll(async () => {
    fleet = await startFleet({ dataDir, workspace: path.join(tmp.dir, 'ws'), only: ['system-mcp'], env: { LOG_LEVEL: 'info' } });
  }, 120_000);
  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it("carries the caller's trace id, the tool, status 200 and the duration", async () => {
    const trace = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const res = await postJson(
      `${fleet.gateway}/mcp`,
      { tool: 'system_info', arguments: {} },
      { traceparent: `00-${trace}-1122334455667788-01` },
    );
    expect(res.status).toBe(200);
    const line = await waitFor('the access line', async () =>
      fs
        .readFileSync(path.join(dataDir, 'logs', 'system-mcp.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.message === 'tool call' && l.trace_id === trace),
    );
    expect(line).toMatchObject({ level: 'info', service: 'system-mcp', tool: 'system_info', status: 200 });
    expect(line.durationMs).toEqual(expect.any(Number));
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
  });
});
