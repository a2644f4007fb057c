/**
 * Who is using the console. With authorization off there is nobody to tell apart: the console is open,
 * as every other route, on the loopback the gateway listens on. With it on, a person logs in by
 * pasting an API key (or an access token), or by signing in at the authorization server (oauth.ts,
 * whose access token is then kept as a pasted one would be): the gateway keeps it server-side and hands the browser an
 * HttpOnly, SameSite=Strict cookie naming a random session (256 bits), scoped to /console/api, so no
 * script ever reads the credential. Every request re-checks the kept credential exactly as a bearer
 * token is checked (a revoked key or an expired token ends the session at once). A script may send
 * `Authorization: Bearer` instead of the cookie.
 *
 * Forged requests: every /console/api request a browser sends must come from the console's own origin
 * (Origin, when sent, equal to this origin; Sec-Fetch-Site, when sent, same-origin), stricter than the
 * fleet's rule, which lets any loopback page in. Writes made with the cookie (or with authorization
 * off) also carry the session's CSRF token in X-Console-CSRF, a header no other origin can send
 * without a CORS preflight the gateway never grants.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@mcp-fleet/kit';
import { API_KEY_PREFIX, hashApiKey, type Authorizer, type Principal } from '../../auth/auth';
import { ADMIN_SCOPE } from './keys';
import { MemorySessionStore, seal, unseal, type SessionStore } from './session-store';

export const COOKIE = 'mcpf_console';
export const CSRF_HEADER = 'x-console-csrf';
export const COOKIE_PATH = '/console/api';
/** A session unused this long ends (last use counted to the minute); none lives longer than MAX_AGE_MS. */
export const IDLE_MS = 30 * 60_000;
export const MAX_AGE_MS = 12 * 3_600_000;
const MAX_SESSIONS = 1000;

/** What the console knows of a request's caller (res.locals.console). */
export interface ConsoleCaller {
  /** How the request was authenticated: no authorization, the console's cookie, or a bearer header. */
  via: 'open' | 'cookie' | 'bearer';
  principal?: Principal;
  admin: boolean;
  csrf?: string;
  /** The hashed session id (cookie sessions), to end it. */
  sessionKey?: string;
  /** The credential a cookie session was opened with (the console's calls of the admin API send it); never sent to the browser. */
  credential?: string;
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');
const sameSecret = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The value of one cookie in a Cookie header (first one wins, as browsers send the most specific path first). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A session's CSRF token: derived from its id (which only the cookie holds), so no store keeps it. */
const csrfOf = (id: string) => createHash('sha256').update(`mcp-fleet console csrf\n${id}`).digest('base64url');
/** Last-seen is written at most this often (a console request is not a database write each). */
const TOUCH_MS = 60_000;

export class ConsoleSessions {
  /** With authorization off: the one CSRF token of this process (there are no sessions). */
  readonly openCsrf = randomBytes(32).toString('base64url');
  private readonly store: SessionStore;

  /** `store`: where sessions are kept (session-store.ts); this process's memory unless given. */
  constructor(
    private readonly auth: Authorizer | undefined,
    store?: SessionStore,
  ) {
    this.store = store ?? new MemorySessionStore(MAX_SESSIONS);
  }

  get storeKind(): SessionStore['kind'] {
    return this.store.kind;
  }

  /** The Authorizer's check; its refusal (an unknown key, a bad token) is UNAUTHORIZED saying why. */
  private authenticate(header: string): Promise<Principal> {
    return this.auth!.authenticate(header).catch((err: unknown) => {
      throw err instanceof AppError ? err : new AppError('UNAUTHORIZED', (err as Error).message);
    });
  }

  /** Checks the credential as a bearer token is checked; a new session's id (for the cookie) and the caller. */
  async login(credential: string): Promise<{ id: string; caller: ConsoleCaller }> {
    if (!this.auth) throw new AppError('CONFLICT', 'Authorization is off: the console needs no login here.');
    const principal = await this.authenticate(`Bearer ${credential}`);
    const now = Date.now();
    await this.store.sweep(now - IDLE_MS, now - MAX_AGE_MS);
    const id = randomBytes(32).toString('base64url');
    const sessionKey = digest(id);
    await this.store.put(sessionKey, {
      sealed: seal(id, credential),
      keyHash: credential.startsWith(API_KEY_PREFIX) ? hashApiKey(credential) : undefined,
      createdAt: now,
      lastSeen: now,
    });
    return { id, caller: { via: 'cookie', principal, admin: isAdmin(principal), csrf: csrfOf(id), sessionKey, credential } };
  }

  async end(sessionKey: string | undefined): Promise<void> {
    if (sessionKey) await this.store.delete(sessionKey);
  }

  /** Ends every session logged in with this API key (it was revoked), in every instance sharing the store. */
  endFor(hash: string): Promise<number> {
    return this.store.deleteByKeyHash(hash);
  }

  /** The caller of a request: open (authorization off), a bearer header, or the console's cookie; undefined: nobody. */
  async caller(req: Request): Promise<ConsoleCaller | undefined> {
    if (!this.auth) return { via: 'open', admin: false, csrf: this.openCsrf };
    if (req.headers.authorization !== undefined) {
      const principal = await this.authenticate(req.headers.authorization);
      return { via: 'bearer', principal, admin: isAdmin(principal) };
    }
    const id = cookieValue(req.headers.cookie, COOKIE);
    if (!id) return undefined;
    const sessionKey = digest(id);
    const session = await this.store.get(sessionKey);
    const now = Date.now();
    const credential = session ? unseal(id, session.sealed) : undefined;
    if (!session || credential === undefined || now - session.lastSeen > IDLE_MS || now - session.createdAt > MAX_AGE_MS) {
      if (session) await this.store.delete(sessionKey);
      return undefined;
    }
    // Revoked or expired since the login: the session ends with it.
    let principal: Principal;
    try {
      principal = await this.auth.authenticate(`Bearer ${credential}`);
    } catch (err) {
      // The issuer's keys out of reach is an outage, not a logout.
      if (err instanceof AppError) throw err;
      await this.store.delete(sessionKey);
      return undefined;
    }
    if (now - session.lastSeen > TOUCH_MS) await this.store.touch(sessionKey, now);
    return { via: 'cookie', principal, admin: isAdmin(principal), csrf: csrfOf(id), sessionKey, credential };
  }
}

/**
 * The admin pages (keys, audit log, log tails) need a principal with the admin scope: with
 * authorization off there is none, and anyone who reaches the gateway (a program a tool runs on this
 * machine included) would otherwise be the administrator.
 */
export const isAdmin = (principal: Principal | undefined) => principal?.scopes.has(ADMIN_SCOPE) === true;

/** The request's own origin, as a browser on this page would write it. */
function ownOrigin(req: Request): string {
  return `${req.protocol}://${req.headers.host ?? ''}`.toLowerCase();
}

/**
 * Only the console's own pages: a browser request from anywhere else (another site, or another port
 * of this machine, which the fleet's rule lets in) is FORBIDDEN before anything runs.
 */
export function sameOriginOnly(req: Request, _res: Response, next: NextFunction): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return next(new AppError('FORBIDDEN', 'The console answers its own pages only (Sec-Fetch-Site is not same-origin).'));
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== ownOrigin(req))
    return next(new AppError('FORBIDDEN', `The console answers its own pages only; origin ${origin.slice(0, 100)} is another.`));
  next();
}

/** A write by cookie (or with authorization off) must carry the session's CSRF token; bearer requests carry no ambient credential. */
export function checkCsrf(req: Request, caller: ConsoleCaller): void {
  if (caller.via === 'bearer' || req.method === 'GET' || req.method === 'HEAD') return;
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string' || !caller.csrf || !sameSecret(sent, caller.csrf))
    throw new AppError('FORBIDDEN', `A console write needs the ${CSRF_HEADER} header from GET /console/api/session; reload the console.`);
}

/** A Set-Cookie value: HttpOnly, for `path`, `maxAgeMs` long (0 with no value: cleared), Secure when the request came over HTTPS. */
export function cookieHeader(
  req: Request,
  cookie: { name: string; value: string | undefined; path: string; sameSite: 'Strict' | 'Lax'; maxAgeMs: number },
): string {
  const parts = [
    `${cookie.name}=${cookie.value ?? ''}`,
    `Path=${cookie.path}`,
    'HttpOnly',
    `SameSite=${cookie.sameSite}`,
    `Max-Age=${cookie.value ? Math.floor(cookie.maxAgeMs / 1000) : 0}`,
  ];
  if (req.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Set-Cookie for a session, or to clear it. */
export const sessionCookie = (req: Request, id: string | undefined): string =>
  cookieHeader(req, { name: COOKIE, value: id, path: COOKIE_PATH, sameSite: 'Strict', maxAgeMs: MAX_AGE_MS });
