/**
 * The Skills extension's methods on the gateway's MCP endpoint, one table for both eras: a
 * 2025-11-25 session gets them through the SDK server (createMcpServer), a 2026-07-28 request
 * through the stateless dispatch; resources/read of a skill file goes through readResource.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { z } from 'zod';
import type { Principal } from '../auth/auth';
import type { GatewayContext } from '../core/context';
import { skillsOf } from '../core/skills';

type SkillMethod = (
  ctx: GatewayContext,
  params: Record<string, unknown>,
  principal: Principal | undefined,
  pageSize: number,
  signal?: AbortSignal,
) => Promise<Record<string, unknown>>;

/** The extension's methods (resources/read is the base protocol's: readResource routes skill URIs). */
export const SKILL_METHODS: Record<string, SkillMethod> = {
  'skills/list': (ctx, p, principal, pageSize) => skillsOf(ctx).list(p.cursor, principal, pageSize),
  'skills/get': (ctx, p, principal, _pageSize, signal) => skillsOf(ctx).get(p.uri, principal, signal),
  'resources/directory/read': (ctx, p, principal, _pageSize, signal) => skillsOf(ctx).readDirectory(p.uri, p.cursor, principal, signal),
};

/** The methods on a 2025-era session's SDK server (loose params: the methods check them and answer -32602). */
export function registerSkillMethods(
  server: Server,
  ctx: GatewayContext,
  pageSize: number,
  principalOf: (extra: { authInfo?: { extra?: Record<string, unknown> } }) => Principal | undefined,
): void {
  for (const [method, run] of Object.entries(SKILL_METHODS))
    server.setRequestHandler(z.object({ method: z.literal(method), params: z.record(z.string(), z.unknown()).optional() }), (req, extra) =>
      run(ctx, req.params ?? {}, principalOf(extra), pageSize, extra.signal),
    );
}

/**
 * resources/list with the skills: the listed resources less any in a service's skill namespace
 * (skill://<service-id>/... is the skills' alone), then each visible skill's SKILL.md.
 */
export async function withSkillResources(
  ctx: GatewayContext,
  listed: { resources: Record<string, unknown>[] },
  principal: Principal | undefined,
): Promise<{ resources: Record<string, unknown>[] }> {
  const skills = skillsOf(ctx);
  const others = listed.resources.filter((r) => typeof r.uri !== 'string' || !skills.reserves(r.uri));
  return { resources: [...others, ...(await skills.skillMdResources(principal))] };
}
