import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import {
  AppError,
  bearerToken,
  createServiceApp,
  FailureBrake,
  sameSecret,
  KeyedSerial,
  parseOrThrow,
  successEnvelope,
  type KitHandle,
  type Logger,
  type ServiceApp,
} from '@mcp-fleet/kit';
import { AuditLog } from './audit';
import { adminCredential, cleanActor, SessionStore, type Session } from './auth';
import { findService, secretCatalog } from './catalog';
import { exportDirOf, SERVICE_ID, tokenFileOf, type Config } from './config';
import { maskedView, restartHint, reveal, revealBody, exportFileOf, writeBody, writeSecrets, type SecretsDeps } from './secrets';
import { openStore, type SecretStore } from './store';
import { createTools } from './tools';

export interface SecretsAppDeps {
  config: Config;
  logger: Logger;
  /** Injected in tests; by default Vault when VAULT_ADDR is set, else the encrypted file store. */
  store?: SecretStore;
  defaultMetrics?: boolean;
}

const COOKIE = 'secrets_ui_session';
const UI_DIR = path.join(__dirname, 'ui');
const STATIC: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

interface Caller {
  actor: string;
  via: 'api' | 'ui';
  session?: Session;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function loginPage(message?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · secrets-ui</title><link rel="stylesheet" href="/static/app.css"></head>
<body class="login"><main><h1>mcp-fleet secrets</h1>
${message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''}
<form method="post" action="/login" autocomplete="off">
<label>Your name (for the audit trail) <input name="actor" maxlength="64" required></label>
<label>Admin token <input name="token" type="password" maxlength="1024" required></label>
<button type="submit">Sign in</button></form></main></body></html>
`;
}

export function createApp({ config, logger, store: injected, defaultMetrics = true }: SecretsAppDeps): ServiceApp {
  const store = injected ?? openStore(config, logger);
  const storeTokenFile = tokenFileOf(config);
  const deps: SecretsDeps = {
    store,
    catalog: secretCatalog(config.servicePorts),
    exportDir: exportDirOf(config),
    restartCommand: config.SECRETS_RESTART_COMMAND,
    maxValueBytes: config.SECRET_VALUE_MAX_BYTES,
    writes: new KeyedSerial(),
  };
  const admin = adminCredential({ token: config.SECRETS_UI_ADMIN_TOKEN, tokenFile: config.SECRETS_UI_ADMIN_TOKEN_FILE, storeTokenFile });
  const brake = new FailureBrake(config.LOGIN_MAX_FAILURES);
  const sessions = new SessionStore(config.SESSION_TTL_SECONDS * 1000);
  const audit = new AuditLog(path.join(config.DATA_DIR, SERVICE_ID, 'audit.log'), logger);
  const staticFiles = Object.fromEntries(Object.keys(STATIC).map((f) => [f, fs.readFileSync(path.join(UI_DIR, f))]));
  const indexHtml = fs.readFileSync(path.join(UI_DIR, 'index.html'));

  const clientOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

  /** The admin credential check with the brake; answers the caller's identity. */
  const checkCredential = (req: Request, presented: string | undefined): void => {
    const client = clientOf(req);
    brake.check(client, 'admin credentials from this address');
    const configured = admin();
    if (!configured) {
      throw new AppError('NOT_CONFIGURED', `No admin credential: set SECRETS_UI_ADMIN_TOKEN or put a token in ${storeTokenFile}.`);
    }
    if (!presented || !sameSecret(configured, presented)) {
      brake.fail(client);
      throw new AppError(
        'UNAUTHORIZED',
        'The admin token is missing or wrong; send "Authorization: Bearer <admin token>" or sign in at /login.',
      );
    }
  };

  /** Same-origin check for state-changing browser requests (login included): Origin and Sec-Fetch-Site must not name another site. */
  const sameOrigin = (req: Request): boolean => {
    const site = req.get('sec-fetch-site');
    if (site && site !== 'same-origin' && site !== 'none') return false;
    const origin = req.get('origin');
    if (origin && origin !== `${req.protocol}://${req.get('host')}`) return false;
    return true;
  };

  const authenticate = (req: Request, res: Response, next: NextFunction) => {
    const bearer = bearerToken(req.get('authorization'));
    if (req.get('authorization') !== undefined) {
      checkCredential(req, bearer);
      res.locals.caller = { actor: cleanActor(req.get('x-actor'), 'api'), via: 'api' } satisfies Caller;
      return next();
    }
    const session = sessions.get(parseCookies(req.get('cookie') ?? '')[COOKIE]);
    if (!session) {
      brake.check(clientOf(req), 'admin credentials from this address');
      throw new AppError('UNAUTHORIZED', 'Sign in at /login, or send "Authorization: Bearer <admin token>".');
    }
    if (!['GET', 'HEAD'].includes(req.method)) {
      const csrf = req.get('x-csrf-token');
      if (!sameOrigin(req) || !csrf || !sameSecret(session.csrf, csrf)) {
        throw new AppError(
          'FORBIDDEN',
          'Cross-site request refused: writes need the X-CSRF-Token of your session and a same-origin request.',
        );
      }
    }
    res.locals.caller = { actor: session.actor, via: 'ui', session } satisfies Caller;
    next();
  };

  const caller = (res: Response) => res.locals.caller as Caller;

  const extend = (app: Express, kit: KitHandle) => {
    app.set('trust proxy', false);
    app.use(
      helmet({
        contentSecurityPolicy: {
          useDefaults: false,
          directives: {
            defaultSrc: ["'none'"],
            scriptSrc: ["'self'"],
            styleSrc: ["'self'"],
            imgSrc: ["'self'"],
            connectSrc: ["'self'"],
            formAction: ["'self'"],
            frameAncestors: ["'none'"],
            baseUri: ["'none'"],
          },
        },
        strictTransportSecurity: config.COOKIE_SECURE,
        // same-origin, not no-referrer: with no-referrer Chromium sends "Origin: null" on same-origin form posts.
        referrerPolicy: { policy: 'same-origin' },
      }),
    );
    const api = express.Router();
    const json = express.json({ limit: config.BODY_LIMIT, strict: true });
    const form = express.urlencoded({ extended: false, limit: '8kb' });
    const wrap = (fn: (req: Request, res: Response) => Promise<void> | void) => (req: Request, res: Response) =>
      Promise.resolve()
        .then(() => fn(req, res))
        .catch((err) => kit.sendError(res, err));

    app.get('/static/:file', (req, res) => {
      const file = String(req.params.file);
      if (!(file in STATIC)) return kit.sendError(res, new AppError('NOT_FOUND', `No static file ${file.slice(0, 80)}.`));
      res.setHeader('Content-Type', STATIC[file]);
      res.setHeader('Cache-Control', 'no-cache');
      res.send(staticFiles[file]);
    });

    app.get('/login', (_req, res) => {
      res.type('html').send(loginPage());
    });

    app.post('/login', form, (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const actor = cleanActor(body.actor, 'operator');
      const html = (status: number, message: string) => res.status(status).type('html').send(loginPage(message));
      if (!sameOrigin(req)) return html(403, 'Cross-site sign-in refused.');
      try {
        checkCredential(req, typeof body.token === 'string' ? body.token : undefined);
      } catch (err) {
        const e = err as AppError;
        if (e.retryAfter !== undefined) res.setHeader('Retry-After', String(e.retryAfter));
        if (e.code === 'UNAUTHORIZED') void audit.record({ actor, via: 'ui', ip: clientOf(req), action: 'login-failed' });
        return html(e.status ?? 401, e.code === 'UNAUTHORIZED' ? 'Wrong admin token.' : e.message);
      }
      const session = sessions.create(actor);
      void audit.record({ actor, via: 'ui', ip: clientOf(req), action: 'login' });
      res.setHeader(
        'Set-Cookie',
        serializeCookie(COOKIE, session.id, {
          httpOnly: true,
          sameSite: 'strict',
          secure: config.COOKIE_SECURE,
          path: '/',
          maxAge: config.SESSION_TTL_SECONDS,
        }),
      );
      res.redirect(303, '/');
    });

    app.post('/logout', (req, res) => {
      const id = parseCookies(req.get('cookie') ?? '')[COOKIE];
      const session = sessions.get(id);
      const csrf = req.get('x-csrf-token');
      if (session && (!sameOrigin(req) || !csrf || !sameSecret(session.csrf, csrf))) {
        return kit.sendError(res, new AppError('FORBIDDEN', 'Cross-site request refused.'));
      }
      sessions.end(id);
      res.setHeader('Set-Cookie', serializeCookie(COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/', maxAge: 0 }));
      res.json(successEnvelope(SERVICE_ID, { signedOut: true }));
    });

    app.get('/', (req, res) => {
      if (!sessions.get(parseCookies(req.get('cookie') ?? '')[COOKIE])) return res.redirect(303, '/login');
      res.setHeader('Cache-Control', 'no-store');
      res.type('html').send(indexHtml);
    });

    api.use((_req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      next();
    });
    api.use((req, res, next) => {
      try {
        authenticate(req, res, next);
      } catch (err) {
        kit.sendError(res, err);
      }
    });
    api.use(json);

    api.get(
      '/session',
      wrap((_req, res) => {
        const c = caller(res);
        res.json(successEnvelope(SERVICE_ID, { actor: c.actor, via: c.via, csrfToken: c.session?.csrf ?? null }));
      }),
    );

    api.get(
      '/services',
      wrap((_req, res) => {
        res.json(
          successEnvelope(SERVICE_ID, {
            store: { kind: store.kind },
            services: deps.catalog.map((s) => ({
              ...s,
              storePath: store.location(s.id),
              exportFile: exportFileOf(deps, s.id),
              restart: restartHint(deps, s.id),
            })),
          }),
        );
      }),
    );

    api.get(
      '/secrets/:service',
      wrap(async (req, res) => {
        const svc = findService(deps.catalog, String(req.params.service));
        res.json(successEnvelope(SERVICE_ID, maskedView(deps, svc, await store.read(svc.id))));
      }),
    );

    api.post(
      '/secrets/:service/reveal',
      wrap(async (req, res) => {
        const { key } = parseOrThrow(revealBody, req.body ?? {}, 'reveal; send {"key": "<VARIABLE>"}');
        const result = await reveal(deps, String(req.params.service), key);
        const c = caller(res);
        await audit.record({
          actor: c.actor,
          via: c.via,
          ip: clientOf(req),
          action: 'reveal',
          service: result.service,
          keys: [key],
          version: result.version,
        });
        res.json(successEnvelope(SERVICE_ID, result));
      }),
    );

    api.put(
      '/secrets/:service',
      wrap(async (req, res) => {
        const { values } = parseOrThrow(writeBody, req.body ?? {}, 'secrets; send {"values": {"NAME": "value" | null}}');
        const result = await writeSecrets(deps, String(req.params.service), values);
        const c = caller(res);
        await audit.record({
          actor: c.actor,
          via: c.via,
          ip: clientOf(req),
          action: 'write',
          service: result.service,
          keys: [...result.set, ...result.removed],
          version: result.version,
        });
        res.json(successEnvelope(SERVICE_ID, result));
      }),
    );

    api.get(
      '/audit',
      wrap(async (req, res) => {
        const limit = Math.min(500, Math.max(1, Number(req.query.limit) || 50));
        res.json(successEnvelope(SERVICE_ID, { entries: await audit.recent(limit) }));
      }),
    );

    api.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => kit.sendError(res, err));
    app.use('/api', api);
  };

  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(),
    defaultMetrics,
    extend,
    healthChecks: [
      {
        name: 'token',
        // Presence and size only, never the value.
        check: () => {
          let size = 0;
          try {
            size = fs.readFileSync(storeTokenFile, 'utf8').trim().length;
          } catch {
            throw new Error(`token file ${storeTokenFile} is missing`);
          }
          if (size === 0) throw new Error(`token file ${storeTokenFile} is empty`);
          return { file: storeTokenFile, present: true };
        },
      },
      { name: 'store', check: () => store.ping(), timeoutMs: config.VAULT_TIMEOUT_MS },
      {
        name: 'admin',
        check: () => {
          if (!admin()) throw new Error('no admin credential: set SECRETS_UI_ADMIN_TOKEN or SECRETS_UI_ADMIN_TOKEN_FILE');
          return { configured: true };
        },
      },
    ],
    onClose: () => store.close(),
  });
}
