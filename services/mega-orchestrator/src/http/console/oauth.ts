/**
 * Signing in to the console at the authorization server (AUTH_ISSUER), for people: the OAuth 2.1
 * authorization code flow with PKCE (S256), as a confidential client (CONSOLE_OAUTH_CLIENT_SECRET,
 * client_secret_basic) or a public one.
 *
 *   GET /console/api/oauth/start     the server's metadata (RFC 8414, else OpenID discovery; its
 *                                    `issuer` must be AUTH_ISSUER), a login attempt: a random state
 *                                    and PKCE verifier kept here, bound to this browser by an
 *                                    HttpOnly cookie (SameSite=Lax: it must come back on the
 *                                    server's redirect), then 303 to its authorization endpoint
 *                                    with the gateway's resource (RFC 8707) and the scopes.
 *   GET /console/api/oauth/callback  the state must be one this gateway started, unused, at most 10
 *                                    minutes old, and started in this browser (its cookie); the
 *                                    code is exchanged once with the verifier; the access token is
 *                                    checked by the gateway's own verifier (Authorizer: issuer,
 *                                    audience = the gateway's resource, signature, expiry) and
 *                                    opens a console session as a pasted token would.
 *
 * Whatever fails goes back to the console's login page with a message saying what (never the code,
 * the token or the verifier). Both routes are navigations from another site's pages by design, so
 * they stand before the API's same-origin rule; the state bound to the cookie is their CSRF check.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { cookieHeader, cookieValue } from './session';

export const OAUTH_COOKIE = 'mcpf_console_oauth';
export const OAUTH_PATH = '/console/api/oauth';
export const CALLBACK_PATH = `${OAUTH_PATH}/callback`;
/** A login attempt not finished by then is forgotten. */
export const ATTEMPT_MS = 10 * 60_000;
const MAX_ATTEMPTS = 1000;
const METADATA_MS = 3_600_000;
const TIMEOUT_MS = 10_000;

export interface ConsoleOAuthOptions {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes: string;
  /** The gateway's resource identifier: the audience its tokens carry (RFC 8707 `resource`). */
  resource: string;
  /** Where the server sends the person back; default: the resource's origin + CALLBACK_PATH. */
  redirectUri?: string;
  logger: Logger;
}

interface ServerMetadata {
  authorization_endpoint: string;
  token_endpoint: string;
}

interface Attempt {
  verifier: string;
  /** sha256 of the browser's attempt cookie. */
  browser: string;
  redirectUri: string;
  createdAt: number;
}

/** A refusal shown on the login page (never a 500: the person can start again). */
export class SignInError extends Error {}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');
const sameDigest = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const random = () => randomBytes(32).toString('base64url');
/** A server's text, short and on one line, for a message. */
const said = (v: unknown) =>
  String(v ?? '')
    .replace(/\s+/g, ' ')
    .slice(0, 200);

export class ConsoleOAuth {
  private readonly attempts = new Map<string, Attempt>();
  private metadata?: { at: number; value: Promise<ServerMetadata> };

  constructor(private readonly options: ConsoleOAuthOptions) {}

  get issuer(): string {
    return this.options.issuer;
  }

  private redirectUri(): string {
    return this.options.redirectUri ?? new URL(CALLBACK_PATH, new URL(this.options.resource).origin).toString();
  }

  /** RFC 8414 metadata (the path form for an issuer with a path), else OpenID discovery; kept an hour. */
  private serverMetadata(): Promise<ServerMetadata> {
    const now = Date.now();
    if (this.metadata && now - this.metadata.at < METADATA_MS) return this.metadata.value;
    const value = this.discover();
    this.metadata = { at: now, value };
    // a failure is asked again next time, not kept for an hour
    value.catch(() => (this.metadata = undefined));
    return value;
  }

  private async discover(): Promise<ServerMetadata> {
    const issuer = this.options.issuer;
    const u = new URL(issuer);
    const pathPart = u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '');
    const urls = [
      `${u.origin}/.well-known/oauth-authorization-server${pathPart}`,
      `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
    ];
    for (const url of urls) {
      const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' }).catch(() => undefined);
      if (!res?.ok) continue;
      const meta = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      if (!meta || typeof meta !== 'object') continue;
      // RFC 8414 §3.3: metadata naming another issuer is not this server's
      if (meta.issuer !== issuer)
        throw new SignInError(`The authorization server's metadata names the issuer ${said(meta.issuer)}, not ${issuer} (AUTH_ISSUER).`);
      const { authorization_endpoint: auth, token_endpoint: token, code_challenge_methods_supported: pkce } = meta;
      if (typeof auth !== 'string' || typeof token !== 'string')
        throw new SignInError('The authorization server publishes no authorization_endpoint or token_endpoint.');
      if (Array.isArray(pkce) && !pkce.includes('S256'))
        throw new SignInError('The authorization server does not support PKCE with S256, which the console requires.');
      return { authorization_endpoint: auth, token_endpoint: token };
    }
    throw new SignInError(`The authorization server ${issuer} could not be reached or publishes no metadata; try again later.`);
  }

  private sweep(now: number): void {
    for (const [key, a] of this.attempts) if (now - a.createdAt > ATTEMPT_MS) this.attempts.delete(key);
    for (const key of this.attempts.keys()) {
      if (this.attempts.size < MAX_ATTEMPTS) break;
      this.attempts.delete(key);
    }
  }

  /** A new login attempt: where to send the browser, and its attempt cookie. */
  async start(req: Request): Promise<{ location: string; cookie: string }> {
    const meta = await this.serverMetadata();
    const now = Date.now();
    this.sweep(now);
    const state = random();
    const verifier = random();
    const browser = random();
    const redirectUri = this.redirectUri();
    this.attempts.set(digest(state), { verifier, browser: digest(browser), redirectUri, createdAt: now });
    const to = new URL(meta.authorization_endpoint);
    to.searchParams.set('response_type', 'code');
    to.searchParams.set('client_id', this.options.clientId);
    to.searchParams.set('redirect_uri', redirectUri);
    to.searchParams.set('scope', this.options.scopes);
    to.searchParams.set('state', state);
    to.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    to.searchParams.set('code_challenge_method', 'S256');
    to.searchParams.set('resource', this.options.resource);
    return { location: to.toString(), cookie: attemptCookie(req, browser) };
  }

  /** The callback: the attempt checked and used up, the code exchanged; the access token (not yet checked). */
  async finish(req: Request): Promise<string> {
    const q = req.query as Record<string, unknown>;
    const state = typeof q.state === 'string' ? q.state : '';
    const key = state && state.length <= 512 ? digest(state) : '';
    const attempt = key ? this.attempts.get(key) : undefined;
    // one use, whatever happens next
    if (attempt) this.attempts.delete(key);
    if (typeof q.error === 'string') {
      const description = typeof q.error_description === 'string' ? `: ${said(q.error_description)}` : '';
      throw new SignInError(`The authorization server did not sign you in (${said(q.error)}${description}).`);
    }
    if (!attempt || Date.now() - attempt.createdAt > ATTEMPT_MS)
      throw new SignInError(
        'This sign-in does not match one the console started (its state is unknown, was already used, or is older than 10 minutes). Start again.',
      );
    const browser = cookieValue(req.headers.cookie, OAUTH_COOKIE);
    if (!browser || !sameDigest(digest(browser), attempt.browser))
      throw new SignInError('This sign-in was started in another browser (or its cookie is gone); start again here.');
    if (typeof q.code !== 'string' || q.code.length === 0 || q.code.length > 4096)
      throw new SignInError('The authorization server sent no code back.');
    return this.exchange(q.code, attempt);
  }

  private async exchange(code: string, attempt: Attempt): Promise<string> {
    const meta = await this.serverMetadata();
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: attempt.redirectUri,
      code_verifier: attempt.verifier,
      resource: this.options.resource,
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.options.clientSecret) {
      const pair = `${encodeURIComponent(this.options.clientId)}:${encodeURIComponent(this.options.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    } else {
      form.set('client_id', this.options.clientId);
    }
    let res: Response;
    try {
      res = await fetch(meta.token_endpoint, {
        method: 'POST',
        headers,
        body: form,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (err) {
      this.options.logger.warn('console sign-in: the token endpoint could not be reached', { err });
      throw new SignInError('The authorization server could not be reached to exchange the code; start again.');
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      const description = typeof body.error_description === 'string' ? `: ${said(body.error_description)}` : '';
      throw new SignInError(
        `The authorization server refused the code (${said(body.error ?? `HTTP ${res.status}`)}${description}); a code works once only. Start again.`,
      );
    }
    if (typeof body.access_token !== 'string' || !/^bearer$/i.test(String(body.token_type ?? '')))
      throw new SignInError('The authorization server answered the code without a bearer access token.');
    return body.access_token;
  }
}

/** The login attempt's cookie: HttpOnly, Lax (it must come back on the server's top-level redirect), for the OAuth routes only. */
export const attemptCookie = (req: Request, value: string | undefined): string =>
  cookieHeader(req, { name: OAUTH_COOKIE, value, path: OAUTH_PATH, sameSite: 'Lax', maxAgeMs: ATTEMPT_MS });

/** The console's login page with a message (a query parameter its script shows, then removes). */
export const loginPageWith = (message: string) => `/console/?login_error=${encodeURIComponent(message.slice(0, 500))}`;

/** An error of the sign-in as the person reads it: ours as said, an Authorizer refusal (the token) with context. */
export function signInMessage(err: unknown): string {
  if (err instanceof SignInError) return err.message;
  if (err instanceof AppError && (err.code === 'UNAUTHORIZED' || err.code === 'FORBIDDEN'))
    return `You signed in at the authorization server, but the gateway refused its token: ${err.message}`;
  return 'The sign-in failed at the gateway; try again, and see its log if it keeps failing.';
}
