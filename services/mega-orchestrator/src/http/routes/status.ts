import type { Express } from 'express';
import type { GatewayContext } from '../../core/context';
import { healthView } from '../../core/views';
import { SERVICE_ID, VERSION } from '../../core/config';

/** How the gateway is doing: /health, /status, /stats, /metrics, /providers. */
export function registerStatusRoutes(app: Express, ctx: GatewayContext): void {
  const { registry, stats } = ctx;

  app.get('/health', (_req, res) => {
    res.json(healthView(ctx));
  });

  app.get('/status', (_req, res) => {
    const healthy = registry.services.filter((s) => s.healthy).length;
    res.json({
      status: healthy === registry.services.length ? 'healthy' : 'degraded',
      service: SERVICE_ID,
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - stats.startedAt) / 1000),
      // polled: checked at least once (the catalog holds every healthy service's tools once polled === total)
      services: { healthy, total: registry.services.length, polled: registry.services.filter((s) => s.lastChecked !== undefined).length },
      tools: registry.catalog.entries.length,
      mcpSessions: ctx.mcpSessionCount(),
      timestamp: new Date().toISOString(),
    });
  });

  app.get('/stats', (_req, res) => {
    res.json({
      service: SERVICE_ID,
      ...stats.snapshot(),
      mcpSessions: ctx.mcpSessionCount(),
      sessionStore: { queued: ctx.history.queued, written: ctx.history.written, dropped: ctx.history.dropped },
      catalog: { tools: registry.catalog.entries.length, builtAt: new Date(registry.catalog.builtAt).toISOString() },
    });
  });

  app.get('/providers', async (_req, res) => {
    const report = await ctx.providers.report();
    const configured = report.providers.filter((p) => p.configured).length;
    res.json({ ...report, count: report.providers.length, configured });
  });

  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', stats.metrics.registry.contentType);
    res.send(await stats.metrics.registry.metrics());
  });
}
