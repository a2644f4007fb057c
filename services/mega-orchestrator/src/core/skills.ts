/**
 * Skills over MCP at the gateway (io.modelcontextprotocol/skills, SEP-2640): the skills of the
 * services behind it (the marketplace's catalog, any kit service serving GET /skills/list),
 * aggregated as the tools are, each under its service's name: a downstream's
 * skill://<path> is the gateway's skill://<service-id>/<path>. The origin is in every URI, two
 * services' skills never collide or shadow one another, and a URI's first segment routes it.
 *
 * Nothing a downstream answers is trusted: an entry is served only when its URIs stay inside its
 * own skill (no dot segments, plain or percent-encoded), its front matter names the skill its URI
 * ends in, its digests and sizes are well formed and within the extension's limits; a read or a
 * directory listing that names another URI than the one asked is refused. Digests pass through
 * unchanged: they are the downstream's, of the bytes it serves and the gateway passes on as they are.
 */
import {
  AppError,
  ERROR_CODES,
  isPlainObject,
  JSONRPC_CODES,
  keysetPage,
  SKILL_LIMITS,
  SKILLS_EXTENSION,
  type Logger,
  type SkillEntry,
} from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { allows, type Principal } from '../auth/auth';
import type { Registry, ServiceState } from './registry';
import type { CallOptions, Downstream, DownstreamAnswer } from '../downstream/downstream';

/** What the gateway declares (both eras): the extension, directory reads included (forwarded to the skill's service). */
export const SKILLS_EXTENSION_CAPABILITY = { [SKILLS_EXTENSION]: { directoryRead: true } } as const;

const SCHEME = 'skill://';
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** The Agent Skills naming rules for the skill name (the URI's last skill-path segment). */
const SKILL_NAME = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
const MAX_URI = 2048;
/** A downstream's listing is walked up to this many pages and entries. */
const MAX_PAGES = 100;
const MAX_SKILLS = 10_000;
/** A service that answered 404 (it serves no skills) is asked again after this; one whose listing failed, after the shorter. */
const NO_SKILLS_RECHECK_MS = 60_000;
const FAILED_RECHECK_MS = 5_000;
/** Refused entries remembered for logging once (a listing that changes every time cannot grow it without bound). */
const MAX_WARNED = 1_000;
/** A listing read this recently is reused (skills/list and resources/list of one client in a row). */
const LISTING_FRESH_MS = 1_000;

/** A service's skills as last read, and the read under way. */
interface Listing {
  at: number;
  entries: SkillEntry[];
  pending?: Promise<SkillEntry[]>;
}

/** A URI whose path has no empty, `.` or `..` segment, plainly or percent-encoded (a host resolving it stays where it points). */
function plainPath(uri: string): boolean {
  if (!uri.startsWith(SCHEME) || uri.length > MAX_URI) return false;
  return uri
    .slice(SCHEME.length)
    .split('/')
    .every((seg) => seg !== '' && !/^(?:\.|%2e){1,2}$/i.test(seg) && !/[\\\s?#]/.test(seg));
}

/** The gateway's URI for a downstream's: skill://<service>/<its path>. */
const outward = (service: string, uri: string) => `${SCHEME}${service}/${uri.slice(SCHEME.length)}`;

const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : undefined);

const notFound = (uri: string, code: number = JSONRPC_CODES.INVALID_PARAMS, what = 'No skill is served at') =>
  new McpError(code, `${what} ${uri.slice(0, 300)}; skills/list shows the skills, each entry lists its files.`, {
    uri: uri.slice(0, MAX_URI),
  });

export class GatewaySkills {
  private readonly listings = new Map<string, Listing>();
  /** Services that serve no skills, until when that is believed. */
  private readonly none = new Map<string, number>();
  /** Refused entries already logged (service and URI), so a bad listing is reported once. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly registry: Registry,
    private readonly options: { timeoutMs: number; logger: Logger },
  ) {}

  /**
   * The service and downstream URI behind a gateway skill URI (its first segment names a service
   * behind the gateway), else undefined: such URIs are the skills' alone, whatever else lists them.
   */
  route(uri: string): { service: ServiceState; inner: string } | undefined {
    if (!uri.startsWith(SCHEME) || uri.length > MAX_URI) return undefined;
    const rest = uri.slice(SCHEME.length);
    const slash = rest.indexOf('/');
    const service = this.registry.get(slash < 0 ? rest : rest.slice(0, slash));
    return service ? { service, inner: slash < 0 ? SCHEME : `${SCHEME}${rest.slice(slash + 1)}` } : undefined;
  }

  /** True for a URI in a service's skill namespace (skill://<service-id>/...). */
  reserves(uri: string): boolean {
    return this.route(uri) !== undefined;
  }

  /** skills/list: every visible service's skills, by URI, a page at a time (pageSize 0: all). */
  async list(cursor: unknown, principal: Principal | undefined, pageSize: number): Promise<{ skills: SkillEntry[]; nextCursor?: string }> {
    const all = (await this.everyListing(principal)).sort((a, b) => (a.uri < b.uri ? -1 : 1));
    try {
      const { items, nextCursor } = keysetPage(all, (e) => e.uri, cursor, pageSize);
      return { skills: items, ...(nextCursor ? { nextCursor } : {}) };
    } catch (err) {
      if (err instanceof AppError) throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `params.cursor: ${err.message}`);
      throw err;
    }
  }

  /** resources/list's part: each visible skill's SKILL.md, named and described from its front matter. */
  async skillMdResources(principal: Principal | undefined): Promise<Record<string, unknown>[]> {
    return (await this.everyListing(principal)).map((e) => {
      const own = Array.isArray(e.resources) ? e.resources.find((r) => r.uri === e.uri) : undefined;
      return {
        uri: e.uri,
        name: e.frontmatter.name,
        ...(typeof e.frontmatter.description === 'string' ? { description: e.frontmatter.description } : {}),
        mimeType: 'text/markdown',
        ...(own ? { size: own.size } : {}),
      };
    });
  }

  /** skills/get: asked of the skill's service every time (a host refreshes an entry's digests with it). */
  async get(uri: unknown, principal: Principal | undefined, signal?: AbortSignal): Promise<{ skill: SkillEntry }> {
    if (typeof uri !== 'string' || uri === '')
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.uri must be the skill:// URI of a SKILL.md (skills/list shows them).');
    const target = this.visible(uri, principal);
    if (!target || !uri.endsWith('/SKILL.md')) throw notFound(uri);
    const answer = await this.ask(target.service, signal, (d, o) =>
      d.request({ ...o, method: 'POST', path: '/skills/get', body: JSON.stringify({ uri: target.inner }) }),
    );
    if (answer.status === 404 || answer.status === 400) throw notFound(uri);
    const raw = isPlainObject(answer.json) ? answer.json.skill : undefined;
    const skill = answer.status === 200 ? this.check(target.service.id, raw, target.inner) : undefined;
    if (!skill) throw this.refused(target.service.id, `skills/get of ${target.inner}`, answer.status);
    return { skill };
  }

  /**
   * resources/read of a skill file: undefined when the URI is not in a service's skill namespace
   * (the gateway reads it as any other resource); its service's answer otherwise, the content
   * naming exactly the URI asked.
   */
  async read(
    uri: string,
    principal: Principal | undefined,
    notFoundCode: number,
    signal?: AbortSignal,
  ): Promise<{ contents: Record<string, unknown>[] } | undefined> {
    const routed = this.route(uri);
    if (!routed) return undefined;
    const target = this.visible(uri, principal);
    if (!target || !plainPath(target.inner)) throw notFound(uri, notFoundCode, 'No skill file is served at');
    const answer = await this.ask(target.service, signal, (d, o) => d.readResource(target.inner, o));
    if (answer.status === 404 || answer.status === 400) throw notFound(uri, notFoundCode, 'No skill file is served at');
    const contents = isPlainObject(answer.json) ? answer.json.contents : undefined;
    const own =
      answer.status === 200 &&
      Array.isArray(contents) &&
      contents.length > 0 &&
      contents.every((c) => isPlainObject(c) && c.uri === target.inner && (typeof c.text === 'string' || typeof c.blob === 'string'));
    if (!own) throw this.refused(target.service.id, `resources/read of ${target.inner}`, answer.status);
    return {
      contents: (contents as Record<string, unknown>[]).map((c) => ({
        uri,
        ...(typeof c.mimeType === 'string' ? { mimeType: c.mimeType.slice(0, 200) } : {}),
        ...(typeof c.text === 'string' ? { text: c.text } : { blob: c.blob }),
      })),
    };
  }

  /** resources/directory/read of a skill directory, forwarded; each child must be a direct child of the directory asked. */
  async readDirectory(
    uri: unknown,
    cursor: unknown,
    principal: Principal | undefined,
    signal?: AbortSignal,
  ): Promise<{ resources: Record<string, unknown>[]; nextCursor?: string }> {
    if (typeof uri !== 'string' || uri === '')
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.uri must be the skill:// URI of a directory (skill://<service>/<skill>).');
    if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length > 4096))
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.cursor must be the nextCursor of the previous page.');
    const target = this.visible(uri, principal);
    if (!target || !plainPath(target.inner) || uri.endsWith('/'))
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `${uri.slice(0, 300)} is not a directory resource of a skill.`, {
        uri: uri.slice(0, MAX_URI),
      });
    const answer = await this.ask(target.service, signal, (d, o) =>
      d.request({
        ...o,
        method: 'POST',
        path: '/resources/directory/read',
        body: JSON.stringify({ uri: target.inner, ...(cursor ? { cursor } : {}) }),
      }),
    );
    if (answer.status === 404 || answer.status === 400)
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `${uri.slice(0, 300)} is not a directory resource of a skill.`, {
        uri: uri.slice(0, MAX_URI),
      });
    const body = isPlainObject(answer.json) ? answer.json : {};
    const children = Array.isArray(body.resources) ? body.resources : undefined;
    const prefix = `${target.inner}/`;
    const direct = (c: unknown): c is Record<string, unknown> =>
      isPlainObject(c) &&
      typeof c.uri === 'string' &&
      c.uri.startsWith(prefix) &&
      !c.uri.slice(prefix.length).includes('/') &&
      plainPath(c.uri) &&
      typeof c.name === 'string';
    if (answer.status !== 200 || !children || !children.every(direct))
      throw this.refused(target.service.id, `resources/directory/read of ${target.inner}`, answer.status);
    return {
      resources: children.map((c) => ({
        uri: outward(target.service.id, c.uri as string),
        name: text(c.name, 256),
        ...(typeof c.mimeType === 'string' ? { mimeType: c.mimeType.slice(0, 200) } : {}),
        ...(Number.isSafeInteger(c.size) ? { size: c.size } : {}),
      })),
      ...(typeof body.nextCursor === 'string' && body.nextCursor.length <= 4096 ? { nextCursor: body.nextCursor } : {}),
    };
  }

  /** The route of a URI the caller may read (reading a skill is a read-only act on its service), healthy or not. */
  private visible(uri: string, principal: Principal | undefined) {
    const target = this.route(uri);
    if (!target || target.inner === SCHEME || !allows(principal, target.service.id, { readOnlyHint: true })) return undefined;
    return target;
  }

  /** One request to a service; a service that is down or does not answer is UPSTREAM_UNAVAILABLE. */
  private async ask(
    s: ServiceState,
    signal: AbortSignal | undefined,
    send: (upstream: Downstream, options: CallOptions) => Promise<DownstreamAnswer>,
  ): Promise<DownstreamAnswer> {
    if (!s.healthy)
      throw new McpError(
        ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc,
        `${s.id} is unavailable (${s.unavailableReason()}); try again once it is healthy.`,
      );
    try {
      return await send(s.upstream, { timeoutMs: this.options.timeoutMs, signal });
    } catch (err) {
      throw new McpError(ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc, `${s.id} is unavailable: ${(err as Error).message.slice(0, 300)}`);
    }
  }

  /** A service's answer the gateway will not pass on: the caller's request was fine, the service's answer was not. */
  private refused(service: string, what: string, status: number): McpError {
    this.options.logger.warn(`${service} answered ${what} with something the gateway does not pass on`, { status });
    return new McpError(
      ERROR_CODES.UPSTREAM_ERROR.rpc,
      `${service} answered ${what.slice(0, 300)} with ${status === 200 ? 'content the gateway refuses (another URI, or an invalid entry)' : `status ${status}`}.`,
    );
  }

  /** Every visible healthy service's entries (services that serve none, or failed to answer, add nothing). */
  private async everyListing(principal: Principal | undefined): Promise<SkillEntry[]> {
    const now = Date.now();
    const services = this.registry.services.filter(
      (s) => s.healthy && (this.none.get(s.id) ?? 0) <= now && allows(principal, s.id, { readOnlyHint: true }),
    );
    return (await Promise.all(services.map((s) => this.listingOf(s)))).flat();
  }

  /** A service's listing: reused for LISTING_FRESH_MS, one read at a time. */
  private listingOf(s: ServiceState): Promise<SkillEntry[]> {
    const held = this.listings.get(s.id);
    if (held?.pending) return held.pending;
    if (held && Date.now() - held.at < LISTING_FRESH_MS) return Promise.resolve(held.entries);
    const pending = this.readListing(s).then(
      (entries) => {
        this.listings.set(s.id, { at: Date.now(), entries });
        return entries;
      },
      (err: unknown) => {
        // what it listed last is not served meanwhile (it may have changed), and it is not asked on every request
        this.listings.delete(s.id);
        this.none.set(s.id, Date.now() + FAILED_RECHECK_MS);
        this.options.logger.debug(`${s.id} skills/list failed`, { err: (err as Error).message });
        return [];
      },
    );
    this.listings.set(s.id, { at: held?.at ?? 0, entries: held?.entries ?? [], pending });
    return pending;
  }

  /** Every page of a service's GET /skills/list, its entries checked and under the gateway's URIs. */
  private async readListing(s: ServiceState): Promise<SkillEntry[]> {
    const entries = new Map<string, SkillEntry>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES && entries.size < MAX_SKILLS; page++) {
      const answer = await s.upstream.request({
        method: 'GET',
        path: `/skills/list${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
        timeoutMs: this.options.timeoutMs,
      });
      if (answer.status === 404) {
        this.none.set(s.id, Date.now() + NO_SKILLS_RECHECK_MS);
        return [];
      }
      const body = isPlainObject(answer.json) ? answer.json : {};
      if (answer.status !== 200 || !Array.isArray(body.skills)) throw new Error(`GET /skills/list answered ${answer.status}`);
      for (const raw of body.skills) {
        const entry = this.check(s.id, raw);
        if (entry && !entries.has(entry.uri) && entries.size < MAX_SKILLS) entries.set(entry.uri, entry);
      }
      const next = body.nextCursor;
      if (typeof next !== 'string' || next === '' || next === cursor || next.length > 4096) break;
      cursor = next;
    }
    return [...entries.values()];
  }

  /**
   * A downstream's entry, checked and under the gateway's URIs; undefined (and reported once) when
   * it breaks a rule. `expected`: the downstream URI it must be the entry of (skills/get).
   */
  private check(service: string, raw: unknown, expected?: string): SkillEntry | undefined {
    const reason = entryProblem(raw, expected);
    if (reason === undefined) {
      const e = raw as SkillEntry;
      return {
        uri: outward(service, e.uri),
        frontmatter: e.frontmatter,
        resources:
          e.resources === 'dynamic'
            ? 'dynamic'
            : e.resources.map((r) => ({ uri: outward(service, r.uri), digest: r.digest, size: r.size })),
      };
    }
    const uri = isPlainObject(raw) && typeof raw.uri === 'string' ? raw.uri.slice(0, 300) : '(no uri)';
    const key = `${service} ${uri} ${reason}`;
    if (!this.warned.has(key)) {
      if (this.warned.size >= MAX_WARNED) this.warned.clear();
      this.warned.add(key);
      this.options.logger.warn(`${service} lists a skill the gateway does not serve: ${reason}`, { uri });
    }
    return undefined;
  }
}

/** Why a downstream's skill entry is not served (undefined: it is fine). */
function entryProblem(raw: unknown, expected?: string): string | undefined {
  if (!isPlainObject(raw) || typeof raw.uri !== 'string') return 'not an entry with a uri';
  const uri = raw.uri;
  if (expected !== undefined && uri !== expected) return `the entry is of ${uri.slice(0, 200)}, not of the skill asked`;
  if (!plainPath(uri) || !uri.endsWith('/SKILL.md') || uri.length <= SCHEME.length + '/SKILL.md'.length)
    return 'its uri is not skill://<skill-path>/SKILL.md with plain segments';
  const root = uri.slice(0, -'/SKILL.md'.length);
  const name = root.slice(root.lastIndexOf('/') + 1);
  const fm = raw.frontmatter;
  if (!isPlainObject(fm) || typeof fm.name !== 'string' || typeof fm.description !== 'string')
    return 'its frontmatter lacks name or description';
  if (fm.name !== name || !SKILL_NAME.test(name))
    return `its frontmatter name is not ${name.slice(0, 64)} (the uri's last segment) or breaks the naming rules`;
  if (JSON.stringify(fm).length > 64 * 1024) return 'its frontmatter is larger than 64 KiB';
  if (raw.resources === 'dynamic') return undefined;
  if (!Array.isArray(raw.resources)) return 'its resources are neither a list nor "dynamic"';
  if (raw.resources.length > SKILL_LIMITS.resources) return `it lists more than ${SKILL_LIMITS.resources} files`;
  const seen = new Set<string>();
  let total = 0;
  for (const r of raw.resources as unknown[]) {
    if (
      !isPlainObject(r) ||
      typeof r.uri !== 'string' ||
      typeof r.digest !== 'string' ||
      !Number.isSafeInteger(r.size) ||
      (r.size as number) < 0
    )
      return 'a file lacks its uri, digest or size';
    if (r.uri !== uri && (!r.uri.startsWith(`${root}/`) || !plainPath(r.uri)))
      return `a file (${r.uri.slice(0, 200)}) is outside the skill`;
    if (!DIGEST.test(r.digest)) return `a digest (${r.digest.slice(0, 80)}) is not sha256:<64 lowercase hex>`;
    if (seen.has(r.uri)) return `a file (${r.uri.slice(0, 200)}) is listed twice`;
    seen.add(r.uri);
    total += r.size as number;
  }
  if (!seen.has(uri)) return 'its files do not include its SKILL.md';
  if (total > SKILL_LIMITS.bytes) return `its files add up to more than ${SKILL_LIMITS.bytes} bytes`;
  return undefined;
}

/** The skills view of a gateway (one per registry, made on first use). */
const views = new WeakMap<Registry, GatewaySkills>();
export function skillsOf(ctx: { registry: Registry; logger: Logger; config: { DOWNSTREAM_TIMEOUT_MS: number } }): GatewaySkills {
  let view = views.get(ctx.registry);
  if (!view) {
    view = new GatewaySkills(ctx.registry, { timeoutMs: ctx.config.DOWNSTREAM_TIMEOUT_MS, logger: ctx.logger });
    views.set(ctx.registry, view);
  }
  return view;
}
