/**
 * The operator's routes for tool pins (issue 33, item 6; pins.ts): GET /admin/pins shows every pin
 * with what each server lists now, POST /admin/pins/{server}/{tool}/approve pins the definition
 * listed now. They need authorization on and the scope `admin` (no tool scope grants it): an
 * agent that may call tools must not be able to approve what a server changed behind its back.
 * Without authorization they answer 403, since anyone who reaches the gateway (a tool running a
 * command on this machine included) would be "the operator"; the pins CLI (src/pins-cli.ts) works on
 * the store directly instead.
 */
import type { Express, Response } from 'express';
import { AppError, parseOrThrow } from '@mcp-fleet/kit';
import { z } from 'zod';
import { ADMIN_SCOPE, principalOf } from '../../auth/auth';
import type { GatewayContext } from '../../core/context';
import { MCP_SERVER_ID } from '../../downstream/mcp-servers-config';
import { PinApprovalError, type PinRecord } from '../../core/pins';

const approveBody = z
  .object({
    hash: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, 'sha256:<64 hex digits>, as GET /admin/pins shows it')
      .optional(),
  })
  .strict();

const TOOL = /^[a-zA-Z0-9_-]{1,64}$/;

/** The operator's routes: authorization on and the scope admin; `what` needs it, `withoutAuth` says what to do instead. */
export function mayAdminister(
  ctx: GatewayContext,
  res: Response,
  what = 'Approving tool pins',
  withoutAuth = 'approve pins with the CLI: node --import tsx services/mega-orchestrator/src/core/pins-cli.ts approve <server> <tool>',
): void {
  if (!ctx.auth)
    throw new AppError(
      'FORBIDDEN',
      `The admin routes need authorization on (API_KEYS_FILE or AUTH_ISSUER) and a key with the scope ${ADMIN_SCOPE}; without it, ${withoutAuth}.`,
    );
  const principal = principalOf(res);
  if (!principal?.scopes.has(ADMIN_SCOPE))
    throw new AppError('FORBIDDEN', `${what} needs the scope ${ADMIN_SCOPE}.`, {
      details: { requiredScopes: [ADMIN_SCOPE] },
    });
}

/** A pin as the operator reviews it: the definitions parsed. */
function pinView(p: PinRecord): Record<string, unknown> {
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  return {
    tool: p.tool,
    hash: p.hash,
    pinnedAt: new Date(p.pinnedAt).toISOString(),
    ...(p.approvedAt ? { approvedAt: new Date(p.approvedAt).toISOString() } : {}),
    definition: parse(p.definition),
    ...(p.seen ? { listedNow: { hash: p.seen.hash, since: new Date(p.seen.at).toISOString(), definition: parse(p.seen.definition) } } : {}),
  };
}

export function registerAdminRoutes(app: Express, ctx: GatewayContext): void {
  const { registry } = ctx;

  app.get('/admin/pins', async (_req, res) => {
    mayAdminister(ctx, res);
    const store = registry.pinStore;
    if (!store) throw new AppError('NOT_CONFIGURED', 'Tool pins are not kept by this gateway.');
    const pins = await store.all();
    const servers = registry.services
      .filter((s) => s.pinMode !== 'off')
      .map((s) => ({
        server: s.id,
        mode: s.pinMode,
        held: [...s.held.keys()],
        changed: [...s.changed.keys()],
        pins: pins.filter((p) => p.server === s.id).map(pinView),
      }));
    res.json({ servers, count: servers.length });
  });

  app.post('/admin/pins/:server/:tool/approve', async (req, res) => {
    mayAdminister(ctx, res);
    const { server, tool } = req.params as { server: string; tool: string };
    const body = parseOrThrow(approveBody, req.body ?? {}, 'body; send {} or {"hash": "sha256:..."} (the definition you reviewed)');
    const s = MCP_SERVER_ID.test(server) && TOOL.test(tool) ? registry.get(server) : undefined;
    const store = registry.pinStore;
    if (!s || s.pinMode === 'off' || !store)
      throw new AppError('NOT_FOUND', `No pinned MCP server named ${server.slice(0, 60)}; GET /admin/pins lists them.`);
    let pin: PinRecord;
    try {
      pin = await store.approve(s.id, tool, body.hash);
    } catch (err) {
      if (!(err instanceof PinApprovalError)) throw err;
      throw new AppError(err.reason === 'unknown' ? 'NOT_FOUND' : 'CONFLICT', err.message);
    }
    ctx.logger.warn(`the operator approved ${s.id}'s changed ${tool}`, { hash: pin.hash, who: principalOf(res)?.subject });
    await registry.recheckPins(s.id);
    res.json({ approved: { server: s.id, tool, hash: pin.hash }, served: s.toolsByName.has(tool) });
  });
}
