/**
 * What each client is told of a tool's `execution` (src/mcp/server.ts, executionFor), with the real
 * TaskManager deciding which tools may run as tasks: a 2026-07-28 client gets it as the downstream
 * declared it; a 2025-11-25 session that serves tasks sees every tool the gateway may run as a task
 * as "optional" (a downstream's required one, and one MCP_TASK_TOOLS names even when its downstream
 * declared "forbidden": the gateway holds that call itself, the downstream sees a plain call); a
 * downstream's "forbidden" is otherwise listed as declared, in every view.
 */
import path from 'node:path';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { buildCatalog } from '../src/core/catalog';
import type { GatewayContext } from '../src/core/context';
import { TaskManager } from '../src/core/tasks';
import type { DownstreamTool } from '../src/core/types';
import { CallHistory } from '../src/history/call-history';
import { listToolsPage } from '../src/mcp/server';

const tool = (name: string, taskSupport?: 'optional' | 'required' | 'forbidden'): DownstreamTool => ({
  name,
  description: name,
  inputSchema: { type: 'object' },
  annotations: {},
  ...(taskSupport ? { execution: { taskSupport } } : {}),
});

describe('a tool’s execution as each client is told it', () => {
  const tmp = tempDir('mcp-fleet-execution-');
  const logger = testLogger('execution');
  const history = new CallHistory({
    file: path.join(tmp.dir, 'history.sqlite'),
    maxCallsPerSession: 10,
    flushMs: 10,
    retentionHours: 1,
    logger,
  });
  const tasks = new TaskManager({
    history,
    logger,
    enabled: true,
    toolNames: ['forced', 'plain_named'],
    ttlMs: 60_000,
    timeoutMs: 30_000,
    pollMs: 100,
    maxTasks: 10,
    maxPerCaller: 0,
    maxResultBytes: 4096,
    leaseMs: 5000,
  });
  const catalog = buildCatalog([
    {
      id: 'svc',
      healthy: true,
      tools: [
        tool('never', 'forbidden'),
        tool('forced', 'forbidden'),
        tool('plain'),
        tool('plain_named'),
        tool('maybe', 'optional'),
        tool('must', 'required'),
      ],
      known: ['never', 'forced', 'plain', 'plain_named', 'maybe', 'must'],
      primaryFor: [],
    },
  ]);
  const ctx = { registry: { catalog }, logger, tasks } as unknown as GatewayContext;
  const listed = (view: 'none' | 'declared' | 'session') =>
    Object.fromEntries(listToolsPage(ctx, 100, undefined, undefined, view).tools.map((t) => [t.name, t.execution]));

  afterAll(async () => {
    await history.close();
    tmp.cleanup();
  });

  it('tells a 2026-07-28 client what the downstream declared', () => {
    expect(listed('declared')).toEqual({
      never: { taskSupport: 'forbidden' },
      forced: { taskSupport: 'forbidden' },
      plain: undefined,
      plain_named: undefined,
      maybe: { taskSupport: 'optional' },
      must: { taskSupport: 'required' },
    });
  });

  it('tells a 2025-11-25 session serving tasks "optional" for every tool the gateway may run as a task', () => {
    expect(listed('session')).toEqual({
      never: { taskSupport: 'forbidden' },
      forced: { taskSupport: 'optional' },
      plain: undefined,
      plain_named: { taskSupport: 'optional' },
      maybe: { taskSupport: 'optional' },
      must: { taskSupport: 'optional' },
    });
  });

  it('tells a client without tasks only the downstream’s "forbidden"', () => {
    expect(listed('none')).toEqual({
      never: { taskSupport: 'forbidden' },
      forced: { taskSupport: 'forbidden' },
      plain: undefined,
      plain_named: undefined,
      maybe: undefined,
      must: undefined,
    });
  });
});
