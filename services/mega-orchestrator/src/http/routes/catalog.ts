import { principalOf } from '../../auth/auth';
import type { Express } from 'express';
import { MAX_LIMIT, paginate, parseOrThrow } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { GatewayContext } from '../../core/context';
import { modesView, schemaView, servicesView, toolListing } from '../../core/views';

const listQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).optional().describe('Items per page (1-500); all tools when omitted.'),
    cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
  })
  .strict();

/** What the gateway offers: /services, /tools/list, /mcp/schema, /modes. */
export function registerCatalogRoutes(app: Express, ctx: GatewayContext): void {
  const { registry } = ctx;

  app.get('/services', (_req, res) => {
    // virtual servers too: the tools each lists, and those it hides with the reason
    res.json(ctx.virtualServers ? { ...servicesView(ctx), virtualServers: ctx.virtualServers.report() } : servicesView(ctx));
  });

  app.get('/tools/list', (req, res) => {
    const q = parseOrThrow(listQuery, req.query, 'query; use ?limit=1-500&cursor=<nextCursor>');
    // MCP_DISCOVERY=meta: the meta-tools, as MCP clients see them (POST /mcp {"tool": "search_tools", ...} calls one)
    if (ctx.discovery) return void res.json({ tools: ctx.discovery.tools, count: ctx.discovery.tools.length, discovery: 'meta' });
    const all = toolListing(registry.catalog, principalOf(res));
    if (q.limit === undefined && q.cursor === undefined) {
      res.json({ tools: all, count: all.length });
      return;
    }
    const page = paginate(all, q.limit ?? 50, q.cursor);
    res.json({ tools: page.items, count: all.length, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  });

  app.get('/mcp/schema', (_req, res) => {
    res.json(schemaView(ctx));
  });

  app.get('/modes', (_req, res) => {
    res.json(modesView(ctx));
  });
}
