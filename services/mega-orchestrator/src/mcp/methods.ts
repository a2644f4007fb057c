/**
 * The MCP methods the gateway serves, one table for both revisions: method → handler(ctx, params,
 * RequestContext) → result. A 2025-11-25 session's SDK server registers them
 * (rev-2025-11-25/sdk-server.ts), its hot path (tools/call, prompts/get, resources/read answered
 * without the SDK transport) calls them straight, and the 2026-07-28 switch (rev-2026-07-28/server.ts)
 * calls them too. What differs between the revisions (how a request is read, how a result, an error,
 * input_required or a notification is written) is in each revision's codec, never here.
 */
import type { GatewayContext } from '../core/context';
import type { RequestContext } from './request-context';
import { callTool, complete, getPrompt, listPrompts, listResources, listResourceTemplates, listToolsPage, readResource } from './server';
import { skillsOf } from '../core/skills';
import { withSkillResources } from './skills';

export type MethodHandler = (
  ctx: GatewayContext,
  params: Record<string, unknown>,
  rc: RequestContext,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

/** The methods of both revisions (2025-only ones, subscribe and the SDK's tasks, are the session's; 2026-only ones the stateless switch's). */
export const METHODS = {
  'tools/list': (ctx, p, rc) => listToolsPage(ctx, rc.pageSize, p.cursor, rc.principal, rc.execution),
  'tools/call': (ctx, p, rc) => callTool(ctx, p, rc),
  'prompts/list': (ctx, _p, rc) => listPrompts(ctx, rc.principal),
  'prompts/get': (ctx, p, rc) => getPrompt(ctx, p, rc.signal, rc.principal, rc.onClientRequest),
  'completion/complete': (ctx, p, rc) => complete(ctx, p, rc.signal, rc.principal),
  'resources/list': (ctx, _p, rc) => withSkillResources(ctx, listResources(ctx, rc.principal), rc.principal),
  'resources/templates/list': (ctx, _p, rc) => listResourceTemplates(ctx, rc.principal),
  'resources/read': (ctx, p, rc) => readResource(ctx, p.uri, rc.resourceNotFound, rc.principal, rc.signal, rc.onClientRequest, p._meta),
  // the Skills extension (core/skills.ts); resources/read of a skill file goes through readResource
  'skills/list': (ctx, p, rc) => skillsOf(ctx).list(p.cursor, rc.principal, rc.pageSize),
  'skills/get': (ctx, p, rc) => skillsOf(ctx).get(p.uri, rc.principal, rc.signal),
  'resources/directory/read': (ctx, p, rc) => skillsOf(ctx).readDirectory(p.uri, p.cursor, rc.principal, rc.signal),
} satisfies Record<string, MethodHandler>;

export type Method = keyof typeof METHODS;

/** True for a method of the table. */
export const isMethod = (method: unknown): method is Method => typeof method === 'string' && Object.hasOwn(METHODS, method);

/** Runs a method of the table. */
export function runMethod(ctx: GatewayContext, method: Method, params: Record<string, unknown>, rc: RequestContext) {
  return (METHODS[method] as MethodHandler)(ctx, params, rc);
}
