/**
 * The catalog's skills over MCP: the Skills extension (io.modelcontextprotocol/skills, SEP-2640)
 * written against protocol revision 2026-07-28. Every skill is served at skill://<name>/, its
 * latest release (else its newest prerelease, as the index and the prompts show); a given version
 * at skill://v<version>/<name>/ (unlisted, answered by skills/get and resources/read). Each file is
 * a resource whose entry carries the sha256 and size of the very bytes resources/read answers.
 * One handler table serves both protocol eras (mcp-modern.ts, the kit's POST /mcp) and the REST
 * routes the gateway reads.
 */
import { isUtf8 } from 'node:buffer';
import {
  AppError,
  DIRECTORY_MIME_TYPE,
  guessMime,
  JSONRPC_CODES,
  keysetPage,
  SKILL_LIMITS,
  SKILLS_EXTENSION,
  type SkillEntry,
} from '@mcp-fleet/kit';
import type { McpMethodHandler } from '@mcp-fleet/kit/mcp';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import semver from 'semver';
import { safeRelativePath } from './archive';
import type { SkillCatalog, SkillVersion } from './catalog';
import { SKILL_NAME } from './skill-format';

/** What a server of the extension declares: resources (its files are read with resources/read) and the extension, directory reads included. */
export const SKILLS_CAPABILITIES = { resources: {}, extensions: { [SKILLS_EXTENSION]: { directoryRead: true } } };
const SCHEME = 'skill://';
const PAGE_SIZE = 100;

/** A skill URI's parts: the skill, the version it pins (none: the one served by default) and a path in it ('' for its root). */
interface SkillAddress {
  name: string;
  pinned?: string;
  path: string;
}

/** The canonical URI of an address: each path segment percent-encoded as encodeURIComponent does. */
export function skillUri(a: SkillAddress): string {
  const rest = a.path ? `/${a.path.split('/').map(encodeURIComponent).join('/')}` : '';
  return `${SCHEME}${a.pinned ? `v${a.pinned}/` : ''}${a.name}${rest}`;
}

/**
 * A skill URI as this server spells it, else undefined: a skill name (not a host to resolve), an
 * optional v<semver> prefix, a safe relative path (no `..`, empty segments or encoded slashes), and
 * the canonical spelling only, so one file has one URI.
 */
export function parseSkillUri(uri: string): SkillAddress | undefined {
  if (uri.length > 2048 || !uri.startsWith(SCHEME)) return undefined;
  const parts = uri.slice(SCHEME.length).split('/');
  let pinned: string | undefined;
  const first = parts[0];
  if (first.startsWith('v') && semver.valid(first.slice(1)) === first.slice(1)) {
    pinned = first.slice(1);
    parts.shift();
  }
  const name = parts.shift();
  if (!name || name.length > 64 || !SKILL_NAME.test(name)) return undefined;
  let rel: string;
  try {
    rel = parts.map((p) => decodeURIComponent(p)).join('/');
  } catch {
    return undefined;
  }
  if (rel !== '' && safeRelativePath(rel) !== rel) return undefined;
  const address = { name, ...(pinned ? { pinned } : {}), path: rel };
  return skillUri(address) === uri ? address : undefined;
}

/** A skill file's MIME type by its extension, else by its bytes (UTF-8 text or not). */
const mimeTypeOf = (file: string, data: Buffer) => guessMime(file, !isUtf8(data));

/** The version an address names: the one pinned, else the latest release (or newest prerelease). */
function versionAt(catalog: SkillCatalog, a: SkillAddress): SkillVersion | undefined {
  if (!a.pinned) return catalog.head(a.name);
  try {
    return catalog.get(a.name, a.pinned);
  } catch {
    return undefined;
  }
}

/** Within the extension's limits (a skill beyond them is not one every host can load). */
const servable = (v: SkillVersion) =>
  v.files.length <= SKILL_LIMITS.resources && v.files.reduce((n, f) => n + f.size, 0) <= SKILL_LIMITS.bytes;

/** A version's entry: its SKILL.md URI, its front matter as written, and every file's URI, digest and size. */
export function skillEntry(v: SkillVersion, pinned: boolean): SkillEntry {
  const base = { name: v.name, ...(pinned ? { pinned: v.version } : {}) };
  return {
    uri: skillUri({ ...base, path: 'SKILL.md' }),
    frontmatter: v.frontmatter,
    resources: v.files.map((f) => ({ uri: skillUri({ ...base, path: f.path }), digest: `sha256:${f.sha256}`, size: f.size })),
  };
}

const notFound = (uri: string, what: string) =>
  new AppError('NOT_FOUND', `${what} ${uri.slice(0, 300)}; skills/list shows the skills, each entry lists its files.`, {
    details: { uri: uri.slice(0, 2048) },
  });

function uriParam(params: Record<string, unknown>): string {
  if (typeof params.uri !== 'string' || params.uri === '')
    throw new AppError('VALIDATION_ERROR', 'params.uri must be a skill:// URI (a string), e.g. skill://sql-review/SKILL.md.');
  return params.uri;
}

/** A page of the items by key, after params.cursor (a cursor of another kind is VALIDATION_ERROR). */
function page<T>(items: readonly T[], keyOf: (item: T) => string, params: Record<string, unknown>, size: number) {
  if (params.cursor !== undefined && typeof params.cursor !== 'string')
    throw new AppError('VALIDATION_ERROR', 'params.cursor must be the nextCursor of the previous page (a string).');
  const { items: slice, nextCursor } = keysetPage(items, keyOf, params.cursor, size);
  return { items: slice, ...(nextCursor ? { nextCursor } : {}) };
}

/** One direct child of a skill directory, as resources/directory/read lists it. */
function child(v: SkillVersion, pinned: string | undefined, dir: string, name: string, isDirectory: boolean) {
  const rel = dir ? `${dir}/${name}` : name;
  const uri = skillUri({ name: v.name, ...(pinned ? { pinned } : {}), path: rel });
  if (isDirectory) return { uri, name, mimeType: DIRECTORY_MIME_TYPE };
  const data = v.content.get(rel)!;
  return { uri, name, mimeType: mimeTypeOf(rel, data), size: data.length };
}

export type SkillMethod = (params: Record<string, unknown>) => Record<string, unknown>;

/**
 * The extension's methods over the catalog (skills/list, skills/get, resources/list,
 * resources/templates/list, resources/read, resources/directory/read). They throw the fleet's
 * errors (NOT_FOUND, VALIDATION_ERROR): mcpSkillMethods answers them as JSON-RPC errors, the REST
 * routes as the fleet's envelope.
 */
export function skillMethods(catalog: SkillCatalog, options: { pageSize?: number } = {}): Record<string, SkillMethod> {
  const pageSize = options.pageSize ?? PAGE_SIZE;
  /** Every skill served by default (its head version, within the limits), by name. */
  const heads = () =>
    catalog
      .names()
      .map((n) => catalog.head(n))
      .filter((v): v is SkillVersion => v !== undefined && servable(v));
  const resolve = (uri: string): { address: SkillAddress; version: SkillVersion } => {
    const address = parseSkillUri(uri);
    const version = address && versionAt(catalog, address);
    if (!address || !version || !servable(version)) throw notFound(uri, 'Nothing is served at');
    return { address, version };
  };

  return {
    'skills/list': (params) => {
      const listed = page(heads(), (v) => v.name, params, pageSize);
      return { skills: listed.items.map((v) => skillEntry(v, false)), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    },

    'skills/get': (params) => {
      const uri = uriParam(params);
      const address = parseSkillUri(uri);
      const version = address?.path === 'SKILL.md' ? versionAt(catalog, address) : undefined;
      if (!version || !servable(version)) throw notFound(uri, 'No skill is served at');
      return { skill: skillEntry(version, address!.pinned !== undefined) };
    },

    // The skills' SKILL.md files (their other files are in each entry, and in directory reads).
    'resources/list': (params) => {
      const listed = page(heads(), (v) => v.name, params, pageSize);
      return {
        resources: listed.items.map((v) => ({
          uri: skillUri({ name: v.name, path: 'SKILL.md' }),
          name: v.name,
          description: v.description,
          mimeType: 'text/markdown',
          size: v.content.get('SKILL.md')!.length,
        })),
        ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}),
      };
    },

    'resources/templates/list': () => ({ resourceTemplates: [] }),

    // The file's bytes: as text when they are UTF-8 (the text encodes back to exactly them), else base64.
    'resources/read': (params) => {
      const uri = uriParam(params);
      const { address, version } = resolve(uri);
      const data = version.content.get(address.path);
      if (!data) throw notFound(uri, 'No skill file is served at');
      const mimeType = mimeTypeOf(address.path, data);
      return { contents: [{ uri, mimeType, ...(isUtf8(data) ? { text: data.toString('utf8') } : { blob: data.toString('base64') }) }] };
    },

    'resources/directory/read': (params) => {
      const uri = uriParam(params);
      const { address, version } = resolve(uri);
      const dir = address.path;
      const prefix = dir ? `${dir}/` : '';
      const children = new Map<string, boolean>();
      for (const f of version.files) {
        if (!f.path.startsWith(prefix)) continue;
        const [name, ...deeper] = f.path.slice(prefix.length).split('/');
        children.set(name, (children.get(name) ?? false) || deeper.length > 0);
      }
      if (children.size === 0)
        throw new AppError('NOT_FOUND', `${uri.slice(0, 300)} is not a directory resource; resources/read reads a file.`, {
          details: { uri: uri.slice(0, 2048) },
        });
      const items = [...children].map(([name, isDirectory]) => child(version, address.pinned, dir, name, isDirectory));
      const listed = page(
        items.sort((a, b) => (a.uri < b.uri ? -1 : 1)),
        (c) => c.uri,
        params,
        pageSize,
      );
      return { resources: listed.items, ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    },
  };
}

/** The protocol revision an MCP request came in (a not-found read has another code in each). */
export type ProtocolEra = '2025-11-25' | '2026-07-28';

/**
 * The methods for an MCP endpoint: a fleet error is -32602 (Invalid params: an unknown skill, file
 * or directory, a bad cursor), with the URI in data; a 2025-era resources/read of an unknown URI
 * is -32002 as that revision has it.
 */
export function mcpSkillMethods(methods: Record<string, SkillMethod>, era: ProtocolEra): Record<string, McpMethodHandler> {
  const out: Record<string, McpMethodHandler> = {};
  for (const [method, run] of Object.entries(methods)) {
    out[method] = (params) => {
      try {
        return run(params);
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== 'NOT_FOUND' && err.code !== 'VALIDATION_ERROR')) throw err;
        const code =
          err.code === 'NOT_FOUND' && method === 'resources/read' && era === '2025-11-25'
            ? JSONRPC_CODES.RESOURCE_NOT_FOUND
            : JSONRPC_CODES.INVALID_PARAMS;
        throw new McpError(code, err.message, err.details);
      }
    };
  }
  return out;
}
