/**
 * Authorization, off by default (the contract's default: no application-layer auth). When
 * configured, the gateway is an OAuth 2.1 resource server as the MCP authorization specification
 * describes: protected resource metadata (RFC 9728) at /.well-known/oauth-protected-resource, 401
 * with WWW-Authenticate naming it, JWT access tokens verified against the authorization server's
 * JWKS with the audience bound to the gateway's resource URL, and scopes mapped to tools. API keys
 * (SHA-256 hashed at rest) serve machine clients with the same scopes.
 *
 * Scopes:
 *   tools:read                read-only tools (readOnlyHint: true) of every service
 *   tools:write               every tool that is not destructive (destructiveHint: true), read-only ones included
 *   tools:all                 every tool
 *   service:<id>              every tool of that service
 *   service:<id>:read         the read-only tools of that service
 *   server:<name>             the virtual server <name> (/servers/<name>/mcp), beside the tool scopes above
 *   admin                     the operator's routes and console pages; no tool
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AppError, bearerToken, type Logger, type ToolAnnotations } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SCOPES_SUPPORTED = ['tools:read', 'tools:write', 'tools:all'] as const;
/** The operator's scope: the console's admin pages, /admin/pins, /admin/servers. No tool scope grants it, and it grants no tool. */
export const ADMIN_SCOPE = 'admin';
export const API_KEY_PREFIX = 'mcpf_';
const METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface Principal {
  kind: 'oauth' | 'api-key';
  /** `sub` of the token (or its client id), or the API key's name. */
  subject: string;
  clientId?: string;
  scopes: ReadonlySet<string>;
  /**
   * Who owns what this caller creates (MCP sessions, tasks, recorded call history; ownership.ts):
   * `api-key:<name>` (names are unique in API_KEYS_FILE), or `oauth:` with the token's issuer and its
   * `sub` (else its client id). Compared whole, never shown.
   */
  owner: string;
}

export interface AuthOptions {
  /** The authorization server's issuer; set: OAuth access tokens are accepted. */
  issuer?: string;
  /** Its JWKS; default: jwks_uri of its metadata. */
  jwksUrl?: string;
  /** The gateway's resource identifier (the audience tokens must carry). */
  resource: string;
  apiKeysFile?: string;
  logger: Logger;
  /** For tests: the key set instead of a remote JWKS. */
  keySet?: JWTVerifyGetKey;
}

const apiKeyEntry = z
  .object({
    name: z.string().min(1).max(100),
    hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'sha256:<64 hex digits> (pnpm gateway-key prints it)'),
    scopes: z.array(z.string().min(1).max(200)).min(1).max(100),
  })
  .strict();
const apiKeysFile = z.union([z.array(apiKeyEntry), z.object({ keys: z.array(apiKeyEntry) }).strict()]);

export const hashApiKey = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

/** A new API key and the line for API_KEYS_FILE; only the hash is ever stored. */
export function newApiKey(name: string, scopes: string[]): { key: string; entry: z.output<typeof apiKeyEntry> } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, entry: { name, hash: hashApiKey(key), scopes } };
}

/** May this principal call a tool of `service` with these annotations? No principal: auth is off. */
export function allows(principal: Principal | undefined, service: string, annotations: ToolAnnotations | undefined): boolean {
  if (!principal) return true;
  const s = principal.scopes;
  const readOnly = annotations?.readOnlyHint === true;
  const destructive = annotations?.destructiveHint === true;
  return (
    s.has('tools:all') ||
    s.has(`service:${service}`) ||
    (!destructive && s.has('tools:write')) ||
    (readOnly && (s.has('tools:read') || s.has(`service:${service}:read`)))
  );
}

export class Authorizer {
  readonly enabled: boolean;
  /** Hash -> the key's principal (one object per key, not one per request). */
  private readonly keys = new Map<string, Principal>();
  private jwks?: JWTVerifyGetKey;
  private jwksLoading?: Promise<JWTVerifyGetKey>;

  constructor(private readonly options: AuthOptions) {
    this.enabled = Boolean(options.issuer || options.apiKeysFile);
    if (options.keySet) this.jwks = options.keySet;
    if (options.apiKeysFile) this.loadKeys(options.apiKeysFile);
  }

  private loadKeys(file: string): void {
    let doc: unknown;
    try {
      doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`API_KEYS_FILE ${file} cannot be read as JSON: ${(err as Error).message}`);
    }
    const parsed = apiKeysFile.safeParse(doc);
    if (!parsed.success)
      throw new Error(`API_KEYS_FILE ${file}: ${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`);
    const names = new Set<string>();
    const keys = new Map<string, Principal>();
    for (const k of Array.isArray(parsed.data) ? parsed.data : parsed.data.keys) {
      // The name is the caller: what one key creates (a session, a task) would be the other's too.
      if (names.has(k.name)) throw new Error(`API_KEYS_FILE ${file}: two keys are named "${k.name}"; give every key a name of its own.`);
      names.add(k.name);
      keys.set(k.hash, Object.freeze({ kind: 'api-key', subject: k.name, scopes: new Set(k.scopes), owner: ownerKey('api-key', k.name) }));
    }
    // All or nothing: a file that fails to parse leaves the keys as they were.
    this.keys.clear();
    for (const [hash, principal] of keys) this.keys.set(hash, principal);
  }

  /** Reads API_KEYS_FILE again (the console wrote it): a key added works and a key removed is refused from the next request on. */
  reloadKeys(): void {
    if (this.options.apiKeysFile) this.loadKeys(this.options.apiKeysFile);
  }

  get metadataUrl(): string {
    const u = new URL(this.options.resource);
    return `${u.origin}${METADATA_PATH}${u.pathname === '/' ? '' : u.pathname}`;
  }

  /** RFC 9728 protected resource metadata. */
  metadata(): Record<string, unknown> {
    return {
      resource: this.options.resource,
      authorization_servers: this.options.issuer ? [this.options.issuer] : [],
      scopes_supported: [...SCOPES_SUPPORTED],
      bearer_methods_supported: ['header'],
      resource_name: 'mcp-fleet gateway',
      resource_documentation: 'https://github.com/mcp-fleet/mcp-fleet/blob/main/docs/gateway.md#authorization',
    };
  }

  private async keySet(): Promise<JWTVerifyGetKey> {
    if (this.jwks) return this.jwks;
    this.jwksLoading ??= (async () => {
      let url = this.options.jwksUrl;
      if (!url) {
        const issuer = this.options.issuer!.replace(/\/+$/, '');
        for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
          const res = await fetch(`${issuer}${path}`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
          if (res?.ok) {
            const meta = (await res.json()) as { jwks_uri?: string };
            if (meta.jwks_uri) {
              url = meta.jwks_uri;
              break;
            }
          }
        }
      }
      if (!url) throw new AppError('UPSTREAM_UNAVAILABLE', 'The authorization server publishes no jwks_uri; set AUTH_JWKS_URL.');
      this.jwks = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000 });
      return this.jwks;
    })().finally(() => (this.jwksLoading = undefined));
    return this.jwksLoading;
  }

  /** The caller, or an error saying why not (401 invalid_token, 503 when the JWKS cannot be had). */
  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (!token) throw new AuthError('missing', 'A bearer token is required (Authorization: Bearer <token>).');
    if (token.startsWith(API_KEY_PREFIX)) {
      const hash = hashApiKey(token);
      for (const [stored, key] of this.keys) {
        if (stored.length === hash.length && timingSafeEqual(Buffer.from(stored), Buffer.from(hash))) return key;
      }
      throw new AuthError('invalid_token', 'The API key is not known.');
    }
    if (!this.options.issuer) throw new AuthError('invalid_token', 'Only API keys are accepted here.');
    try {
      const { payload } = await jwtVerify(token, await this.keySet(), {
        issuer: this.options.issuer,
        audience: this.options.resource,
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        clockTolerance: 5,
      });
      const scopes = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []);
      const clientId =
        typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : undefined;
      // Sessions and tasks belong to whom the token names: a token naming no one would share them with every such token.
      const who = payload.sub ? `sub:${payload.sub}` : clientId ? `client:${clientId}` : undefined;
      if (!who) throw new AuthError('invalid_token', 'The access token names no subject (sub) or client (client_id, azp).');
      return {
        kind: 'oauth',
        subject: payload.sub ?? clientId!,
        clientId,
        scopes,
        owner: ownerKey('oauth', `${this.options.issuer}\n${who}`),
      };
    } catch (err) {
      if (err instanceof AppError || err instanceof AuthError) throw err;
      const code = (err as { code?: string }).code ?? '';
      const why =
        code === 'ERR_JWT_EXPIRED'
          ? 'the token has expired'
          : code === 'ERR_JWT_CLAIM_VALIDATION_FAILED'
            ? `its ${(err as { claim?: string }).claim ?? 'claims'} does not match this resource`
            : 'its signature or format is not valid';
      this.options.logger.debug('access token refused', { code, message: (err as Error).message });
      throw new AuthError('invalid_token', `The access token was refused: ${why}.`);
    }
  }

  private challenge(error?: string, description?: string, scope?: string): string {
    const parts = [`resource_metadata="${this.metadataUrl}"`];
    if (error) parts.push(`error="${error}"`);
    if (description) parts.push(`error_description="${description.replace(/"/g, "'")}"`);
    if (scope) parts.push(`scope="${scope}"`);
    return `Bearer ${parts.join(', ')}`;
  }

  /** Express middleware: open paths pass; others need a principal (set on res.locals and req.auth for the SDK). */
  middleware(sendError: (res: Response, err: unknown) => void, openPaths: (path: string) => boolean) {
    return async (req: Request, res: Response, next: NextFunction) => {
      if (openPaths(req.path)) return next();
      try {
        const principal = await this.authenticate(req.headers.authorization);
        res.locals.principal = principal;
        (req as Request & { auth?: unknown }).auth = {
          token: '[redacted]',
          clientId: principal.clientId ?? principal.subject,
          scopes: [...principal.scopes],
          extra: { principal },
        };
        next();
      } catch (err) {
        if (err instanceof AuthError) {
          res.setHeader(
            'WWW-Authenticate',
            this.challenge(err.kind === 'missing' ? undefined : 'invalid_token', err.kind === 'missing' ? undefined : err.message),
          );
          return sendError(res, new AppError('UNAUTHORIZED', err.message));
        }
        return sendError(res, err);
      }
    };
  }

  /** The WWW-Authenticate value of a 403 for a call the token may not make, naming the scopes that would allow it. */
  insufficientScope(needed: string[], message: string): string {
    return this.challenge('insufficient_scope', message, needed.join(' '));
  }

  routes() {
    return (req: Request, res: Response) => res.json(this.metadata());
  }
}

/** A principal's owner key: its kind and identity, identities over 128 characters (a token's are the issuer's to choose) as their SHA-256. */
function ownerKey(kind: Principal['kind'], identity: string): string {
  return `${kind}:${identity.length <= 128 ? identity : `sha256:${createHash('sha256').update(identity).digest('hex')}`}`;
}

class AuthError extends Error {
  constructor(
    readonly kind: 'missing' | 'invalid_token',
    message: string,
  ) {
    super(message);
  }
}

/** The caller of a request (read from its response's locals), set by the middleware when auth is on. */
export function principalOf(res: Pick<Response, 'locals'> | undefined): Principal | undefined {
  return res?.locals.principal as Principal | undefined;
}

/** `details.requiredScopes` of the gateway's own FORBIDDEN for a call beyond a token's scopes. */
export function requiredScopes(details: unknown): string[] | undefined {
  const v = (details as { requiredScopes?: unknown } | undefined)?.requiredScopes;
  return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : undefined;
}

/** The scopes that would let a call of this tool through, for the insufficient_scope challenge. */
export function scopesFor(service: string, annotations: ToolAnnotations | undefined): string[] {
  if (annotations?.readOnlyHint) return ['tools:read', `service:${service}:read`];
  if (annotations?.destructiveHint) return ['tools:all', `service:${service}`];
  return ['tools:write', `service:${service}`];
}

/** One JSON line per tool call: who, tool, service, outcome, duration; never argument values. */
export class AuditLog {
  private readonly stream?: fs.WriteStream;

  constructor(file: string | undefined, logger: Logger) {
    if (!file) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.stream = fs.createWriteStream(file, { flags: 'a', mode: 0o600 });
    this.stream.on('error', (err) => logger.error('audit log write failed', { err, file }));
  }

  write(entry: {
    principal?: Principal;
    tool: string;
    service?: string;
    ok: boolean;
    code?: string;
    durationMs: number;
    transport: string;
    requestId: string;
  }): void {
    if (!this.stream) return;
    const { principal, ...rest } = entry;
    this.stream.write(
      `${JSON.stringify({
        at: new Date().toISOString(),
        who: principal ? `${principal.kind}:${principal.subject}` : 'anonymous',
        ...rest,
        outcome: entry.ok ? 'ok' : (entry.code ?? 'ERROR'),
      })}\n`,
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.stream ? this.stream.end(resolve) : resolve()));
  }
}
