/**
 * The routes of virtual servers: their MCP endpoints (/servers/{name}/mcp: POST in both protocol eras
 * and the native {tool, arguments} body, GET and DELETE for 2025-era sessions), and the operator's
 * admin API (/admin/servers: list, get, put, delete; scope admin), which writes VIRTUAL_SERVERS_FILE.
 */
import type { Express, Request, Response } from 'express';
import { AppError, isPlainObject, parseOrThrow } from '@mcp-fleet/kit';
import { principalOf } from '../../auth/auth';
import type { GatewayContext } from '../../core/context';
import { mayAdminister } from '../routes/admin';
import { methodNotAllowed } from '../routes/mcp';
import { endpointOf, SERVER_NAME, serverScope, virtualServerSchema, type VirtualServers } from './index';

const VIRTUAL_MCP_PATH = /^\/servers\/[^/]+\/mcp$/;

/** True for a virtual server's MCP endpoint (its parse errors are answered as /mcp's are). */
export const isVirtualMcpPath = (path: string) => VIRTUAL_MCP_PATH.test(path);

export function registerVirtualServerRoutes(app: Express, ctx: GatewayContext, servers: VirtualServers): void {
  /**
   * The server a request names, when the caller may use it. With authorization on, the scope
   * server:<name> is checked before the name is looked up: a caller without it learns nothing of
   * which servers exist (the same 403 for every name).
   */
  const serverFor = (req: Request, res: Response) => {
    const name = String(req.params.name);
    res.locals.transport = 'jsonrpc';
    if (ctx.auth) {
      const scope = serverScope(name.slice(0, 40));
      if (!principalOf(res)?.scopes.has(scope)) {
        const message = `This token may not use the virtual server ${name.slice(0, 40)}; it needs the scope ${scope}.`;
        res.setHeader('WWW-Authenticate', ctx.auth.insufficientScope([scope], message));
        throw new AppError('FORBIDDEN', message, { details: { requiredScopes: [scope] } });
      }
    }
    const server = SERVER_NAME.test(name) ? servers.get(name) : undefined;
    if (!server)
      throw new AppError('NOT_FOUND', `No virtual server named "${name.slice(0, 40)}"; GET /services lists them (virtualServers).`);
    return server;
  };

  app.post('/servers/:name/mcp', (req, res) => serverFor(req, res).handlers.postMcp(req, res));
  app.get('/servers/:name/mcp', (req, res) => serverFor(req, res).transport.handleSession(req, res));
  app.delete('/servers/:name/mcp', (req, res) => serverFor(req, res).transport.handleSession(req, res));
  app.all('/servers/:name/mcp', methodNotAllowed('GET, POST, DELETE'));

  const admin = (res: Response) =>
    mayAdminister(ctx, res, 'Managing virtual servers', 'edit VIRTUAL_SERVERS_FILE (the gateway reads it again when it changes)');
  const named = (req: Request) => {
    const name = String(req.params.name);
    if (!SERVER_NAME.test(name))
      throw new AppError(
        'VALIDATION_ERROR',
        `"${name.slice(0, 60)}" is not a server name: 1-40 lower-case letters, digits or -, starting with a letter or digit.`,
      );
    return name;
  };
  const shown = (name: string) => {
    const def = servers.definition(name);
    const report = servers.report().find((r) => r.name === name);
    return def && report ? { ...report, definition: def, scope: serverScope(name) } : undefined;
  };

  app.get('/admin/servers', (_req, res) => {
    admin(res);
    const list = servers.report().map((r) => shown(r.name));
    res.json({ servers: list, count: list.length, file: servers.status() });
  });

  app.get('/admin/servers/:name', (req, res) => {
    admin(res);
    const name = named(req);
    const server = shown(name);
    if (!server) throw new AppError('NOT_FOUND', `No virtual server named ${name}; GET /admin/servers lists them.`);
    res.json(server);
  });

  app.put('/admin/servers/:name', async (req, res) => {
    admin(res);
    const name = named(req);
    if (!isPlainObject(req.body))
      throw new AppError('VALIDATION_ERROR', 'Send the server as a JSON object: {"tools": [...], "description"?}.');
    const def = parseOrThrow(
      virtualServerSchema,
      req.body,
      'virtual server; send {"tools": [{"tool", "name"?, "description"?, "fixed"?, "defaults"?}], "description"?}',
    );
    const { created } = await servers.put(name, def);
    ctx.logger.warn(`the operator ${created ? 'created' : 'changed'} virtual server ${name}`, { who: principalOf(res)?.subject });
    res.status(created ? 201 : 200).json({ ...shown(name), endpoint: endpointOf(name) });
  });

  app.delete('/admin/servers/:name', async (req, res) => {
    admin(res);
    const name = named(req);
    if (!(await servers.delete(name))) throw new AppError('NOT_FOUND', `No virtual server named ${name}; GET /admin/servers lists them.`);
    ctx.logger.warn(`the operator removed virtual server ${name}`, { who: principalOf(res)?.subject });
    res.json({ deleted: name });
  });
}
