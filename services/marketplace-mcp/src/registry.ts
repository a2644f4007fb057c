import fs from 'node:fs/promises';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { getService } from '@mcp-fleet/inventory';
import semver from 'semver';
import { z } from 'zod';
import type { FleetServiceRef } from './config';

/** The official MCP Registry (API v0.1) names its registry-managed block with this key. */
export const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';
export const PUBLISHER_META = 'io.modelcontextprotocol.registry/publisher-provided';
export const SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
const RANGE_LIKE = /^[\^~><=]|[xX*]|\s|\|\|/;

const keyValueInput = z
  .object({
    name: z.string().min(1).max(256),
    description: z.string().max(1024).optional(),
    isRequired: z.boolean().optional(),
    isSecret: z.boolean().optional(),
    format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
    value: z.string().max(4096).optional(),
    default: z.string().max(4096).optional(),
    placeholder: z.string().max(1024).optional(),
    choices: z.array(z.string().max(256)).max(100).optional(),
  })
  .loose();
const transport = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdio') }).loose(),
  z
    .object({ type: z.literal('streamable-http'), url: z.string().min(1).max(2048), headers: z.array(keyValueInput).max(50).optional() })
    .loose(),
  z.object({ type: z.literal('sse'), url: z.url(), headers: z.array(keyValueInput).max(50).optional() }).loose(),
]);
const exactVersion = z
  .string()
  .min(1)
  .max(255)
  .refine((v) => v !== 'latest' && !RANGE_LIKE.test(v), 'must be one version, not a range or "latest"');

/** server.json as the official registry defines it (the fields it requires and the ones we serve). */
export const serverDetailSchema = z
  .object({
    $schema: z.url().optional(),
    name: z.string().min(3).max(200).regex(SERVER_NAME, 'reverse-DNS "namespace/name" with exactly one slash'),
    description: z.string().min(1).max(100),
    title: z.string().min(1).max(100).optional(),
    version: exactVersion,
    websiteUrl: z.url().optional(),
    repository: z
      .object({
        url: z.url(),
        source: z.string().min(1).max(64),
        id: z.string().max(256).optional(),
        subfolder: z.string().max(512).optional(),
      })
      .loose()
      .optional(),
    icons: z
      .array(
        z
          .object({
            src: z.url().max(255),
            mimeType: z.string().optional(),
            sizes: z.array(z.string()).optional(),
            theme: z.enum(['light', 'dark']).optional(),
          })
          .loose(),
      )
      .max(20)
      .optional(),
    packages: z
      .array(
        z
          .object({
            registryType: z.string().min(1).max(64),
            registryBaseUrl: z.url().optional(),
            identifier: z.string().min(1).max(512),
            version: exactVersion.optional(),
            fileSha256: z
              .string()
              .regex(/^[a-f0-9]{64}$/)
              .optional(),
            runtimeHint: z.string().max(64).optional(),
            transport,
          })
          .loose(),
      )
      .max(50)
      .optional(),
    remotes: z
      .array(
        z
          .object({
            type: z.enum(['streamable-http', 'sse']),
            url: z.string().min(1).max(2048),
            headers: z.array(keyValueInput).max(50).optional(),
          })
          .loose(),
      )
      .max(50)
      .optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

export type ServerDetail = z.output<typeof serverDetailSchema>;

export interface OfficialMeta {
  status: 'active' | 'deprecated' | 'deleted';
  publishedAt: string;
  updatedAt: string;
  isLatest: boolean;
}

export interface ServerResponse {
  server: ServerDetail;
  _meta: { [OFFICIAL_META]: OfficialMeta };
}

interface Entry {
  server: ServerDetail;
  status: OfficialMeta['status'];
  publishedAt: string;
  updatedAt: string;
  source: 'fleet' | 'file';
}

const officialInFile = z
  .object({
    status: z.enum(['active', 'deprecated', 'deleted']).optional(),
    publishedAt: z.iso.datetime({ offset: true }).optional(),
    updatedAt: z.iso.datetime({ offset: true }).optional(),
  })
  .loose();

export interface RegistryProblem {
  entry: string;
  field: string;
  message: string;
}

/** Newest first: semver order where both are semver, else the later-published one. */
function compareVersions(a: Entry, b: Entry): number {
  const va = semver.valid(a.server.version);
  const vb = semver.valid(b.server.version);
  if (va && vb) return semver.rcompare(va, vb);
  return b.publishedAt.localeCompare(a.publishedAt);
}

const keyOf = (e: { server: { name: string; version: string } }) => `${e.server.name}\u0000${e.server.version}`;

/** The sub-registry: the fleet's own services, then the entries of MARKETPLACE_REGISTRY_FILE. */
export class SubRegistry {
  private entries: Entry[] = [];
  problems: RegistryProblem[] = [];

  constructor(
    private readonly options: {
      fleet: FleetServiceRef[];
      gatewayUrl: string;
      namespace: string;
      file?: string;
      startedAt: string;
      logger: Logger;
    },
  ) {}

  async load(): Promise<void> {
    const problems: RegistryProblem[] = [];
    const entries: Entry[] = this.fleetEntries();
    if (this.options.file) entries.push(...(await this.fileEntries(this.options.file, problems)));
    const seen = new Set<string>();
    this.entries = entries
      .filter((e) => {
        const k = keyOf(e);
        if (seen.has(k)) {
          problems.push({ entry: `${e.server.name}@${e.server.version}`, field: 'version', message: 'listed twice; the first is kept' });
          return false;
        }
        seen.add(k);
        return true;
      })
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    this.problems = problems;
    this.options.logger.info('sub-registry loaded', { servers: this.names().length, problems: problems.length });
  }

  private fleetEntries(): Entry[] {
    const mcpUrl = `${this.options.gatewayUrl.replace(/\/+$/, '')}/mcp`;
    return this.options.fleet.map((s) => {
      const pattern = getService(s.id)?.pattern;
      const remotes: NonNullable<ServerDetail['remotes']> = [{ type: 'streamable-http', url: mcpUrl }];
      if (pattern === 'json-rpc' || pattern === 'rest-mcp') remotes.push({ type: 'streamable-http', url: `${s.url}/mcp` });
      return {
        server: {
          name: `${this.options.namespace}/${s.id}`,
          title: s.id,
          description: s.description.length > 100 ? `${s.description.slice(0, 99)}…` : s.description,
          version: '0.1.0',
          remotes,
          _meta: {
            [PUBLISHER_META]: {
              serviceUrl: s.url,
              healthUrl: `${s.url}/health`,
              toolsUrl: `${s.url}/tools/list`,
              tools: s.tools,
              viaGateway: mcpUrl,
            },
          },
        },
        status: 'active' as const,
        publishedAt: this.options.startedAt,
        updatedAt: this.options.startedAt,
        source: 'fleet' as const,
      };
    });
  }

  private async fileEntries(file: string, problems: RegistryProblem[]): Promise<Entry[]> {
    let raw: unknown;
    let mtime: string;
    try {
      const [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
      raw = JSON.parse(text);
      mtime = st.mtime.toISOString();
    } catch (err) {
      problems.push({
        entry: file,
        field: '(file)',
        message: `cannot read MARKETPLACE_REGISTRY_FILE: ${(err as Error).message.slice(0, 200)}`,
      });
      return [];
    }
    const list = Array.isArray(raw)
      ? raw
      : Array.isArray((raw as { servers?: unknown })?.servers)
        ? (raw as { servers: unknown[] }).servers
        : undefined;
    if (!list) {
      problems.push({ entry: file, field: '(file)', message: 'expected a JSON list of server.json objects or {"servers": [...]}' });
      return [];
    }
    const out: Entry[] = [];
    list.slice(0, 10_000).forEach((item, i) => {
      // Either a bare server.json or a ServerResponse ({server, _meta}) as the official registry answers.
      const wrapped = typeof item === 'object' && item !== null && 'server' in item;
      const detail = wrapped ? (item as { server: unknown }).server : item;
      const parsed = serverDetailSchema.safeParse(detail);
      if (!parsed.success) {
        for (const issue of parsed.error.issues.slice(0, 5)) {
          problems.push({ entry: `${file}[${i}]`, field: issue.path.map(String).join('.') || '(entry)', message: issue.message });
        }
        return;
      }
      const metaSource = wrapped ? (item as { _meta?: Record<string, unknown> })._meta : parsed.data._meta;
      const official = officialInFile.safeParse(metaSource?.[OFFICIAL_META] ?? {});
      const meta = official.success ? official.data : {};
      const server = { ...parsed.data };
      if (server._meta) {
        // The registry's own block is the registry's to write, never the publisher's.
        const rest = { ...server._meta };
        delete rest[OFFICIAL_META];
        server._meta = Object.keys(rest).length ? rest : undefined;
        if (!server._meta) delete server._meta;
      }
      const publishedAt = meta.publishedAt ? new Date(meta.publishedAt).toISOString() : mtime;
      out.push({
        server,
        status: meta.status ?? 'active',
        publishedAt,
        updatedAt: meta.updatedAt ? new Date(meta.updatedAt).toISOString() : publishedAt,
        source: 'file',
      });
    });
    return out;
  }

  names(): string[] {
    return [...new Set(this.entries.map((e) => e.server.name))];
  }

  private latestOf(name: string): Entry | undefined {
    const versions = this.entries.filter((e) => e.server.name === name).sort(compareVersions);
    return versions.find((e) => e.status !== 'deleted' && !semver.prerelease(e.server.version)) ?? versions[0];
  }

  private respond(e: Entry): ServerResponse {
    return {
      server: e.server,
      _meta: {
        [OFFICIAL_META]: {
          status: e.status,
          publishedAt: e.publishedAt,
          updatedAt: e.updatedAt,
          isLatest: this.latestOf(e.server.name) === e,
        },
      },
    };
  }

  /** GET /v0.1/servers: every version, ordered by name then version; the cursor is the last key served. */
  list(opts: { cursor?: string; limit: number; search?: string; updatedSince?: string; version?: string }): {
    servers: ServerResponse[];
    metadata: { count: number; nextCursor?: string };
  } {
    let after: string | undefined;
    if (opts.cursor) {
      after = Buffer.from(opts.cursor, 'base64url').toString('utf8');
      if (!after.includes('\u0000') || Buffer.from(after, 'utf8').toString('base64url') !== opts.cursor) {
        throw new AppError('VALIDATION_ERROR', 'The cursor is not one this registry issued; start again without a cursor.', {
          details: [{ path: 'cursor', message: 'unrecognised cursor' }],
        });
      }
    }
    let since: number | undefined;
    if (opts.updatedSince !== undefined) {
      since = z.iso.datetime({ offset: true }).safeParse(opts.updatedSince).success ? Date.parse(opts.updatedSince) : NaN;
      if (Number.isNaN(since)) {
        throw new AppError('VALIDATION_ERROR', 'updated_since must be an RFC 3339 date-time such as 2025-08-07T13:15:04Z.', {
          details: [{ path: 'updated_since', message: 'not an RFC 3339 date-time' }],
        });
      }
    }
    const needle = opts.search?.toLowerCase();
    const matching = this.entries.filter(
      (e) =>
        (!needle || e.server.name.toLowerCase().includes(needle)) &&
        (since === undefined || Date.parse(e.updatedAt) > since) &&
        (!opts.version || (opts.version === 'latest' ? this.latestOf(e.server.name) === e : e.server.version === opts.version)),
    );
    const rest = after === undefined ? matching : matching.filter((e) => keyOf(e) > after);
    const page = rest.slice(0, opts.limit);
    const servers = page.map((e) => this.respond(e));
    return {
      servers,
      metadata: {
        count: servers.length,
        ...(rest.length > page.length ? { nextCursor: Buffer.from(keyOf(page[page.length - 1]), 'utf8').toString('base64url') } : {}),
      },
    };
  }

  private require(name: string): Entry[] {
    const versions = this.entries.filter((e) => e.server.name === name).sort(compareVersions);
    if (versions.length === 0) {
      throw new AppError(
        'NOT_FOUND',
        `Server not found: "${name.slice(0, 200)}"; GET /registry/v0.1/servers lists the registry (names are URL-encoded in paths).`,
      );
    }
    return versions;
  }

  versions(name: string): { servers: ServerResponse[]; metadata: { count: number } } {
    const servers = this.require(name).map((e) => this.respond(e));
    return { servers, metadata: { count: servers.length } };
  }

  get(name: string, version = 'latest'): ServerResponse {
    const versions = this.require(name);
    const e = version === 'latest' ? this.latestOf(name) : versions.find((v) => v.server.version === version);
    if (!e) throw new AppError('NOT_FOUND', `Server version not found: ${name.slice(0, 200)} has no version "${version.slice(0, 64)}".`);
    return this.respond(e);
  }

  has(name: string): boolean {
    return this.entries.some((e) => e.server.name === name);
  }
}
