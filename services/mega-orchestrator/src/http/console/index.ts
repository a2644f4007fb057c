/**
 * The console for people, at /console/ on the gateway's own origin: the fleet, the catalog (each
 * tool's schema as a form, run through the gateway's native call path), the caller's call history,
 * access (API keys, the audit log) and live log tails. Static files from ../../console (plain ES
 * modules, no framework, nothing fetched from elsewhere) under a strict CSP; its JSON API under
 * /console/api, authenticated and guarded as session.ts says.
 *
 * Registered by app.ts before the gateway's bearer middleware, so that a person's cookie session can
 * stand in for the bearer header here (and only here); everything else the console does goes
 * through the gateway's own code paths with the caller's principal: the native handler (scopes,
 * routing, history, audit), toolListing/listPrompts/listResources (filtered by scopes),
 * CallHistory.read (the caller's own sessions), the admin API (/admin/servers, asked over loopback
 * with the caller's own credential, so its checks and its file writing are the only ones). The rate
 * limiter counts its POSTs as any other.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { AppError, ERROR_CODES, JSONRPC_CODES, MAX_LIMIT, parseOrThrow, type HttpRequest, type HttpResponse } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { principalOf } from '../../auth/auth';
import type { GatewayContext } from '../../core/context';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource } from '../../mcp/server';
import { ownerOf, SESSION_ID } from '../../auth/ownership';
import type { Transport } from '../../core/types';
import { toolListing } from '../../core/views';
import { auditQuery, readAudit } from './audit';
import { fleetView } from './fleet';
import { listSessions } from './history';
import { ADMIN_SCOPE, KeyStore, newKeyBody } from './keys';
import { LogTails, loggedServices } from './logs';
import { attemptCookie, ConsoleOAuth, loginPageWith, signInMessage } from './oauth';
import { DatabaseSessionStore } from './session-store';
import { checkCsrf, ConsoleSessions, sameOriginOnly, sessionCookie, type ConsoleCaller } from './session';

const ASSET_DIR = path.resolve(__dirname, '..', '..', '..', 'console');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // tool results: images and audio arrive as base64 and are shown as data: URLs
  "img-src 'self' data:",
  "media-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What app.ts hands the console: the gateway's own native handler, error sender and rate limiter. */
export interface ConsoleHooks {
  native: (req: HttpRequest, res: HttpResponse, transport: Transport) => Promise<void>;
  sendError: (res: Response, err: unknown) => void;
  limiter?: RequestHandler;
  /** The audit log the gateway writes (undefined: none). */
  auditFile?: string;
}

const loginBody = z.object({ credential: z.string().min(1).max(8192).describe('An API key (mcpf_…) or an OAuth access token.') }).strict();
const promptBody = z
  .object({ name: z.string().min(1).max(200), arguments: z.record(z.string(), z.string().max(65_536)).optional() })
  .strict();
const resourceBody = z.object({ uri: z.string().min(1).max(2048) }).strict();
const historyQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100),
    cursor: z.string().max(512).optional(),
  })
  .strict();

/** An MCP error from the shared prompt and resource code, as the fleet's error (the console speaks REST). */
function fromMcpError(err: unknown): unknown {
  if (!(err instanceof McpError)) return err;
  const message = err.message.replace(/^MCP error -?\d+: /, '');
  if (err.code === JSONRPC_CODES.RESOURCE_NOT_FOUND || /^Unknown prompt/.test(message)) return new AppError('NOT_FOUND', message);
  if (err.code === JSONRPC_CODES.INVALID_PARAMS) return new AppError('VALIDATION_ERROR', message);
  const code = Object.entries(ERROR_CODES).find(([, v]) => v.rpc === err.code)?.[0] as keyof typeof ERROR_CODES | undefined;
  return new AppError(code && code !== 'INTERNAL' ? code : 'UPSTREAM_ERROR', message);
}

function assets(): Map<string, { type: string; body: Buffer }> {
  const out = new Map<string, { type: string; body: Buffer }>();
  for (const name of fs.readdirSync(ASSET_DIR)) {
    const type = TYPES[path.extname(name)];
    if (type && /^[\w.-]+$/.test(name)) out.set(name, { type, body: fs.readFileSync(path.join(ASSET_DIR, name)) });
  }
  return out;
}

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/** The console's sign-in at AUTH_ISSUER, when CONSOLE_OAUTH_CLIENT_ID is set too. */
function signInAt(ctx: GatewayContext): ConsoleOAuth | undefined {
  const c = ctx.config;
  if (!c.CONSOLE_OAUTH_CLIENT_ID) return undefined;
  if (!c.AUTH_ISSUER || !ctx.auth) {
    ctx.logger.warn('CONSOLE_OAUTH_CLIENT_ID is set without AUTH_ISSUER: the console offers no sign-in (its tokens could not be checked)');
    return undefined;
  }
  return new ConsoleOAuth({
    issuer: c.AUTH_ISSUER,
    clientId: c.CONSOLE_OAUTH_CLIENT_ID,
    clientSecret: c.CONSOLE_OAUTH_CLIENT_SECRET,
    scopes: c.CONSOLE_OAUTH_SCOPES,
    resource: String(ctx.auth.metadata().resource),
    redirectUri: c.CONSOLE_OAUTH_REDIRECT_URI,
    logger: ctx.logger,
  });
}

/** The console's routes on `mount`, a router app.ts mounts at /console before its bearer middleware. */
export function registerConsole(mount: Router, ctx: GatewayContext, hooks: ConsoleHooks): { sessions: ConsoleSessions } {
  const files = assets();
  // Several instances sharing SESSION_DATABASE_URL share their console sessions too (session-store.ts).
  const sessions = new ConsoleSessions(
    ctx.auth,
    ctx.history.databaseUrl ? new DatabaseSessionStore(() => ctx.history.database()) : undefined,
  );
  const keys = new KeyStore(ctx.auth ? ctx.config.API_KEYS_FILE : undefined, ctx.auth);
  const tails = new LogTails(ctx);
  const oauth = signInAt(ctx);

  const secure = (res: Response) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  };

  const page = express.Router();
  page.use((_req, res, next) => {
    secure(res);
    next();
  });
  page.get('/', (req, res) => {
    // /console without its slash: the page's relative asset paths need it
    if (!req.originalUrl.split('?')[0].endsWith('/')) return res.redirect(308, '/console/');
    res.setHeader('Cache-Control', 'no-store');
    res.type(files.get('index.html')!.type).send(files.get('index.html')!.body);
  });
  page.get('/assets/:file', (req, res, next) => {
    const asset = files.get(String(req.params.file));
    if (!asset) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.type(asset.type).send(asset.body);
  });

  const api = express.Router();
  api.use((_req, res, next) => {
    secure(res);
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  api.use(sameOriginOnly);
  api.use(express.json({ limit: ctx.config.BODY_LIMIT, strict: true, type: 'application/json' }));
  // Who is calling; login and the session probe are the only routes that need nobody.
  api.use(async (req, res, next) => {
    const caller = await sessions.caller(req);
    if (caller) {
      res.locals.console = caller;
      if (caller.principal) res.locals.principal = caller.principal;
    } else if (!(req.path === '/login' || req.path === '/session')) {
      throw new AppError('UNAUTHORIZED', 'Log in to the console first (paste an API key), or send Authorization: Bearer <key>.');
    }
    next();
  });
  if (hooks.limiter) api.use(hooks.limiter);
  api.use((req, res, next) => {
    const caller = res.locals.console as ConsoleCaller | undefined;
    if (caller) checkCsrf(req, caller);
    next();
  });
  const callerOf = (res: Response) => res.locals.console as ConsoleCaller;
  const adminOnly = (_req: Request, res: Response, next: NextFunction) => {
    if (!callerOf(res).admin)
      throw new AppError(
        'FORBIDDEN',
        ctx.auth
          ? 'This needs a key with the admin scope (pnpm gateway-key --scopes admin,... or the access page).'
          : 'The admin pages need authorization on (API_KEYS_FILE) and a key with the admin scope.',
        { details: { requiredScopes: [ADMIN_SCOPE] } },
      );
    next();
  };

  const describe = (caller: ConsoleCaller | undefined) => ({
    authorization: ctx.auth ? 'on' : 'off',
    loggedIn: caller !== undefined,
    ...(caller
      ? {
          via: caller.via,
          admin: caller.admin,
          ...(caller.csrf ? { csrf: caller.csrf } : {}),
          ...(caller.principal
            ? { principal: { kind: caller.principal.kind, subject: caller.principal.subject, scopes: [...caller.principal.scopes].sort() } }
            : {}),
        }
      : {}),
    keysManaged: keys.configured,
    auditLog: hooks.auditFile !== undefined,
    ...(oauth ? { signIn: { issuer: oauth.issuer } } : {}),
  });

  api.get('/session', (_req, res) => {
    res.json(describe(res.locals.console as ConsoleCaller | undefined));
  });
  api.post('/login', async (req, res) => {
    const { credential } = parseOrThrow(loginBody, req.body, 'login; send {"credential": "<API key>"} as application/json');
    const { id, caller } = await sessions.login(credential);
    res.setHeader('Set-Cookie', sessionCookie(req, id));
    res.json(describe(caller));
  });
  api.post('/logout', async (req, res) => {
    await sessions.end(callerOf(res).sessionKey);
    res.setHeader('Set-Cookie', sessionCookie(req, undefined));
    res.json({ loggedIn: false });
  });

  api.get('/fleet', async (_req, res) => {
    res.json(await fleetView(ctx));
  });
  api.get('/catalog', (_req, res) => {
    const principal = principalOf(res);
    const tools = toolListing(ctx.registry.catalog, principal);
    res.json({
      tools,
      prompts: listPrompts(ctx, principal).prompts,
      resources: listResources(ctx, principal).resources,
      resourceTemplates: listResourceTemplates(ctx, principal).resourceTemplates,
    });
  });
  // A tool call: the gateway's native POST /mcp handler, with the console's caller as its principal.
  api.post('/call', (req, res) => hooks.native(req, res, 'native'));
  api.post('/prompts/get', async (req, res) => {
    const body = parseOrThrow(promptBody, req.body, 'prompt; send {"name", "arguments": {…strings}}');
    const started = performance.now();
    const result = await getPrompt(ctx, body, undefined, principalOf(res)).catch((err: unknown) => {
      throw fromMcpError(err);
    });
    res.json({ ...result, durationMs: Math.round(performance.now() - started) });
  });
  api.post('/resources/read', async (req, res) => {
    const { uri } = parseOrThrow(resourceBody, req.body, 'resource; send {"uri"}');
    const started = performance.now();
    const result = await readResource(ctx, uri, JSONRPC_CODES.RESOURCE_NOT_FOUND, principalOf(res)).catch((err: unknown) => {
      throw fromMcpError(err);
    });
    res.json({ ...result, durationMs: Math.round(performance.now() - started) });
  });

  api.get('/history', async (req, res) => {
    const q = parseOrThrow(historyQuery.omit({ cursor: true }), req.query, 'query; use ?limit=1-500');
    res.json({ sessions: await listSessions(ctx.history, ownerOf(principalOf(res)), q.limit) });
  });
  api.get('/history/:session_id', async (req, res) => {
    const id = String(req.params.session_id);
    const q = parseOrThrow(historyQuery, req.query, 'query; use ?limit=1-500&cursor=<nextCursor>');
    if (!(await ctx.history.whenReady()))
      throw new AppError('NOT_CONFIGURED', ctx.history.failure ?? 'The session store is not available.');
    const view = SESSION_ID.test(id) ? await ctx.history.read(id, ownerOf(principalOf(res)), q.limit, q.cursor) : undefined;
    if (!view) throw new AppError('NOT_FOUND', `No stored session "${id.slice(0, 128)}" of yours; the history page lists yours.`);
    res.json(view);
  });

  api.get('/keys', adminOnly, async (_req, res) => {
    res.json({ keys: await keys.list() });
  });
  api.post('/keys', adminOnly, async (req, res) => {
    const body = parseOrThrow(newKeyBody, req.body, 'key; send {"name", "scopes": [...]}');
    const created = await keys.create(body.name, body.scopes);
    ctx.logger.info('console: API key created', { name: created.name, scopes: created.scopes, by: principalOf(res)?.subject ?? 'open' });
    res.status(201).json({ ...created, note: 'Shown once: copy it now. Only its SHA-256 is stored.' });
  });
  api.delete('/keys/:name', adminOnly, async (req, res) => {
    const gone = await keys.revoke(String(req.params.name));
    const ended = await sessions.endFor(gone.hash);
    ctx.logger.info('console: API key revoked', { name: gone.name, by: principalOf(res)?.subject ?? 'open', consoleSessions: ended });
    res.json({ revoked: gone.name, consoleSessionsEnded: ended });
  });
  // Virtual servers: the admin API's own routes (scope admin), with the caller's credential; the
  // console adds the same-origin rule and the CSRF token in front of them.
  const adminApi = async (req: Request, res: Response, method: string, name?: string) => {
    const caller = callerOf(res);
    const credential = caller.via === 'bearer' ? req.headers.authorization : `Bearer ${caller.credential ?? ''}`;
    const host = WILDCARD.has(ctx.config.HOST) ? '127.0.0.1' : ctx.config.HOST;
    const url = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${req.socket.localPort}/admin/servers${
      name === undefined ? '' : `/${encodeURIComponent(name)}`
    }`;
    let answer: globalThis.Response;
    try {
      answer = await fetch(url, {
        method,
        headers: { authorization: credential ?? '', 'content-type': 'application/json', accept: 'application/json' },
        body: method === 'PUT' ? JSON.stringify(req.body ?? null) : undefined,
        signal: AbortSignal.timeout(15_000),
        redirect: 'error',
      });
    } catch (err) {
      ctx.logger.error('console: the admin API could not be reached over loopback', { err, url });
      throw new AppError('UPSTREAM_UNAVAILABLE', 'The gateway’s admin API could not be reached from the console; see the gateway’s log.');
    }
    res
      .status(answer.status)
      .type('application/json')
      .send(await answer.text());
  };
  api.get('/servers', adminOnly, (req, res) => adminApi(req, res, 'GET'));
  api.get('/servers/:name', adminOnly, (req, res) => adminApi(req, res, 'GET', String(req.params.name)));
  api.put('/servers/:name', adminOnly, (req, res) => adminApi(req, res, 'PUT', String(req.params.name)));
  api.delete('/servers/:name', adminOnly, (req, res) => adminApi(req, res, 'DELETE', String(req.params.name)));
  api.get('/audit', adminOnly, async (req, res) => {
    const q = parseOrThrow(auditQuery, req.query, 'query; use ?limit=1-1000&who=&tool=&outcome=');
    res.json(await readAudit(hooks.auditFile, q));
  });
  api.get('/logs', adminOnly, (_req, res) => {
    res.json({ services: loggedServices(ctx) });
  });
  api.get('/logs/:service', adminOnly, (req, res) => tails.stream(req, res));

  api.use((req: Request) => {
    throw new AppError('NOT_FOUND', `No console route ${req.method} /console/api${req.path.slice(0, 200)}.`);
  });
  api.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed') return hooks.sendError(res, new AppError('VALIDATION_ERROR', 'The body is not valid JSON.'));
    if (type === 'entity.too.large')
      return hooks.sendError(res, new AppError('PAYLOAD_TOO_LARGE', `The body is over ${ctx.config.BODY_LIMIT}.`));
    hooks.sendError(res, err);
  });

  // Signing in at the authorization server: navigations from its pages, before the API's same-origin rule (oauth.ts).
  const signIn = express.Router();
  signIn.use((_req, res, next) => {
    secure(res);
    res.setHeader('Cache-Control', 'no-store');
    if (!oauth)
      throw new AppError(
        'NOT_CONFIGURED',
        'Signing in at an authorization server is not set up here: set AUTH_ISSUER and CONSOLE_OAUTH_CLIENT_ID, or log in with an API key.',
      );
    next();
  });
  signIn.get('/start', async (req, res) => {
    try {
      const { location, cookie } = await oauth!.start(req);
      res.setHeader('Set-Cookie', cookie);
      res.redirect(303, location);
    } catch (err) {
      ctx.logger.warn('console: sign-in could not start', { reason: signInMessage(err) });
      res.redirect(303, loginPageWith(signInMessage(err)));
    }
  });
  signIn.get('/callback', async (req, res) => {
    const clear = attemptCookie(req, undefined);
    try {
      const token = await oauth!.finish(req);
      const { id, caller } = await sessions.login(token);
      ctx.logger.info('console: signed in at the authorization server', { subject: caller.principal?.subject });
      res.setHeader('Set-Cookie', [clear, sessionCookie(req, id)]);
      res.redirect(303, '/console/#/fleet');
    } catch (err) {
      ctx.logger.info('console: sign-in refused', { reason: signInMessage(err) });
      res.setHeader('Set-Cookie', clear);
      res.redirect(303, loginPageWith(signInMessage(err)));
    }
  });
  signIn.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => hooks.sendError(res, err));
  mount.use('/api/oauth', signIn);
  mount.use('/api', api);
  mount.use(page);
  mount.use((req: Request, res: Response) => {
    secure(res);
    hooks.sendError(res, new AppError('NOT_FOUND', `No console page ${req.path.slice(0, 200)}; open /console/.`));
  });
  return { sessions };
}
