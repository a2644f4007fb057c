import fs from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import type { Express } from 'express';
import { AppError, MAX_LIMIT, parseOrThrow } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { GatewayContext } from '../../core/context';
import { callerOwner, SESSION_ID } from '../../auth/ownership';
import { SERVICE_ID } from '../../core/config';

const MAX_FILES_WALKED = 10_000;

async function walk(dir: string): Promise<{ files: number; bytes: number; truncated: boolean }> {
  let files = 0;
  let bytes = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(current, e.name);
      if (e.isDirectory()) stack.push(full);
      else if (e.isFile()) {
        files += 1;
        bytes += (await fs.stat(full).catch(() => undefined))?.size ?? 0;
        if (files >= MAX_FILES_WALKED) return { files, bytes, truncated: true };
      }
    }
  }
  return { files, bytes, truncated: false };
}

/** Looking inside: /memory/stats (heap report), /files/stats (data directory walk), /debug/cache, /debug/contexts/:id. */
export function registerDebugRoutes(app: Express, ctx: GatewayContext): void {
  const { registry } = ctx;

  app.get('/memory/stats', async (_req, res) => {
    const m = process.memoryUsage();
    const heap = v8.getHeapStatistics();
    const body: Record<string, unknown> = {
      service: SERVICE_ID,
      process: { rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers },
      v8: {
        totalHeapSize: heap.total_heap_size,
        usedHeapSize: heap.used_heap_size,
        heapSizeLimit: heap.heap_size_limit,
        mallocedMemory: heap.malloced_memory,
        externalMemory: heap.external_memory,
        numberOfNativeContexts: heap.number_of_native_contexts,
        numberOfDetachedContexts: heap.number_of_detached_contexts,
      },
      timestamp: new Date().toISOString(),
    };
    // The memory store's own statistics, when a healthy service offers memory_stats.
    const owner = registry.catalog.byName.get('memory_stats');
    if (owner) {
      const out = await ctx.dispatcher.call({
        tool: 'memory_stats',
        args: {},
        mode: 'auto',
        transport: 'native',
        requestId: String(res.locals.requestId),
        timeoutMs: Math.min(ctx.config.DOWNSTREAM_TIMEOUT_MS, 5000),
      });
      body.store =
        out.ok && out.body.success
          ? { service: out.service, result: out.body.result }
          : { service: out.service ?? owner.service, error: out.body.success ? undefined : out.body.error, code: out.code };
    } else {
      body.store = null;
    }
    res.json(body);
  });

  app.get('/files/stats', async (_req, res) => {
    const gatewayDir = path.join(ctx.config.DATA_DIR, 'gateway');
    const [db, tree, fsStats] = await Promise.all([
      ctx.history.sizes(),
      walk(gatewayDir),
      fs.statfs(ctx.config.DATA_DIR).catch(() => undefined),
    ]);
    res.json({
      service: SERVICE_ID,
      dataDir: ctx.config.DATA_DIR,
      gatewayDir,
      sessionsDatabase: db,
      files: tree,
      disk: fsStats ? { totalBytes: fsStats.blocks * fsStats.bsize, freeBytes: fsStats.bavail * fsStats.bsize } : null,
      timestamp: new Date().toISOString(),
    });
  });

  app.get('/debug/cache', (_req, res) => {
    const { catalog } = registry;
    res.json({
      catalog: {
        builtAt: new Date(catalog.builtAt).toISOString(),
        // built again only when a service's health, tools or known names changed, not every poll
        builds: registry.catalogBuilds,
        signature: catalog.signature.length > 200 ? `${catalog.signature.slice(0, 200)}…` : catalog.signature,
        tools: catalog.entries.length,
        plain: catalog.entries.filter((e) => e.plain).length,
        qualified: catalog.entries.filter((e) => !e.plain).length,
        knownNames: catalog.owners.size,
        collisions: Object.fromEntries(catalog.collisions),
        skipped: catalog.skipped,
      },
      services: Object.fromEntries(
        registry.services.map((s) => [
          s.id,
          {
            status: s.health,
            tools: s.healthy ? s.tools.length : 0,
            lastKnownTools: s.tools.length,
            knownNames: s.known.size,
            lastPoll: s.lastPoll ?? null,
            polls: s.polls,
            breaker: s.breaker.snapshot(),
          },
        ]),
      ),
      pollIntervalMs: ctx.config.HEALTH_POLL_MS,
      timestamp: new Date().toISOString(),
    });
  });

  const contextQuery = z
    .object({
      limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).describe('Calls per page (1-500, default 50).'),
      cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
    })
    .strict();

  app.get('/debug/contexts/:session_id', async (req, res) => {
    const sessionId = String(req.params.session_id);
    const q = parseOrThrow(contextQuery, req.query, 'query; use ?limit=1-500&cursor=<nextCursor>');
    if (!(await ctx.history.whenReady())) {
      throw new AppError('NOT_CONFIGURED', ctx.history.failure ?? 'The session store is not available.');
    }
    // The caller's own sessions only (ownership.ts): another principal's, or an id no call can carry, is unknown.
    const owner = callerOwner(res);
    // A store that fails the read (PostgreSQL gone, restarting, its tables missing) is unavailable, not a bug.
    const stored = SESSION_ID.test(sessionId) ? ctx.history.read(sessionId, owner, q.limit, q.cursor) : Promise.resolve(undefined);
    const view = await stored.catch((err: unknown) => {
      throw err instanceof AppError
        ? err
        : new AppError('UPSTREAM_UNAVAILABLE', `The session store could not be read: ${(err as Error).message}`);
    });
    if (!view) {
      throw new AppError(
        'NOT_FOUND',
        `No stored session "${sessionId.slice(0, 128)}"; calls record one when they carry session_id (native) or run in an MCP session.`,
      );
    }
    res.json(view);
  });
}
