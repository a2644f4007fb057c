import path from 'node:path';
import express from 'express';
import { AppError, createServiceApp, parseOrThrow, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { mountMcpEndpoint } from '@mcp-fleet/kit/mcp';
import { AdminCheck, requireRead, sendAuthError, TokenVerifier, WRITE_SCOPE } from './auth';
import { SkillCatalog } from './catalog';
import { fleetServices, SERVICE_ID, type Config } from './config';
import { installPlanInput, installPlan } from './install-plan';
import { mountModernMcp } from './mcp-modern';
import { skillPrompts } from './prompts';
import { mcpSkillMethods, skillMethods, SKILLS_CAPABILITIES } from './skills-extension';
import { SubRegistry } from './registry';
import { createTools } from './tools';
import { registryQuery } from './tools/registry-search';
import { integrityOf } from './views';
import { z } from 'zod';

const yankInput = z.object({ reason: z.string().min(1).max(500).optional() }).strict();

export interface AppDeps {
  config: Config;
  logger: Logger;
  defaultMetrics?: boolean;
  /** Entries per page of skills/list and the other MCP lists (default 100). */
  skillsPageSize?: number;
}

export interface MarketplaceApp extends ServiceApp {
  catalog: SkillCatalog;
  registry: SubRegistry;
  /** Settles when the skills folder, the published store and the registry file have been read. */
  ready: Promise<void>;
}

/** Builds the app; never listens (server.ts does). */
export function createApp({ config, logger, defaultMetrics, skillsPageSize }: AppDeps): MarketplaceApp {
  const fleet = config.fleet && config.gatewayUrl ? { fleet: config.fleet, gatewayUrl: config.gatewayUrl } : fleetServices();
  const baseUrl = (config.MARKETPLACE_PUBLIC_URL ?? `http://127.0.0.1:${config.PORT ?? 7034}`).replace(/\/+$/, '');
  const limits = { maxBytes: config.MARKETPLACE_MAX_ARCHIVE_BYTES, maxFiles: config.MARKETPLACE_MAX_FILES };
  const catalog = new SkillCatalog({
    skillsDir: path.resolve(config.MARKETPLACE_SKILLS_DIR),
    storeDir: path.join(config.DATA_DIR, 'marketplace', 'packages'),
    logger,
    ...limits,
  });
  const registry = new SubRegistry({
    ...fleet,
    namespace: config.MARKETPLACE_NAMESPACE,
    file: config.MARKETPLACE_REGISTRY_FILE || undefined,
    startedAt: new Date().toISOString(),
    logger,
  });
  const ready = Promise.all([catalog.reload(), registry.load()]).then(() => undefined);
  const verifier = new TokenVerifier({ secret: config.JWT_SECRET, issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE });
  const admin = new AdminCheck(config.MARKETPLACE_ADMIN_TOKEN);
  const tools = createTools({ catalog, registry, baseUrl });
  // The Skills extension's methods: both MCP eras and the REST routes the gateway reads.
  const skills = skillMethods(catalog, { pageSize: skillsPageSize });

  const kit = createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools,
    // Every catalog skill as an MCP prompt; the gateway federates them (docs/services/marketplace-mcp.md).
    prompts: skillPrompts(catalog),
    defaultMetrics,
    healthChecks: [
      {
        name: 'catalog',
        required: false,
        check: async () => {
          await ready;
          const detail = {
            skillsDir: config.MARKETPLACE_SKILLS_DIR,
            skills: catalog.names().length,
            problems: catalog.problems.length,
            registryServers: registry.names().length,
            registryProblems: registry.problems.length,
          };
          if (catalog.problems.length || registry.problems.length) {
            throw new Error(`${catalog.problems.length + registry.problems.length} catalog problem(s); catalog_validate lists them`);
          }
          return detail;
        },
      },
      {
        name: 'auth',
        required: false,
        check: () => ({
          mode: verifier.enabled ? 'jwt' : 'open',
          ...(verifier.enabled
            ? { requiredScope: 'market:read', issuer: config.JWT_ISSUER, ...(config.JWT_AUDIENCE ? { audience: config.JWT_AUDIENCE } : {}) }
            : { warning: 'JWT_SECRET is not set: every route is open to anyone who can reach this port' }),
          publishing: config.MARKETPLACE_ADMIN_TOKEN ? 'enabled' : 'off (MARKETPLACE_ADMIN_TOKEN unset)',
        }),
      },
    ],
    routes: (r) => {
      r.tool('get', '/skills/v1/index', 'skills_list');
      r.tool('get', '/skills/v1/packages/:name/:version', 'skills_resolve');
    },
    extend: (app, handle) => {
      app.use(requireRead(verifier, handle.sendError));
      // Read, and a skills folder changed on disk read again (at most every MARKETPLACE_RESCAN_MS), before any answer.
      app.use((_req, _res, next) => {
        ready.then(() => catalog.freshen(config.MARKETPLACE_RESCAN_MS)).then(() => next(), next);
      });

      // The Skills extension for the gateway (kit style: the MCP results as JSON, errors as the envelope).
      const skillRoute =
        (method: string, input: (req: express.Request) => Record<string, unknown>) => (req: express.Request, res: express.Response) =>
          void res.json(skills[method](input(req)));
      const query = (req: express.Request) => (typeof req.query.cursor === 'string' ? { cursor: req.query.cursor } : {});
      const body = (req: express.Request) => (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {});
      const json = express.json({ limit: config.BODY_LIMIT });
      app.get('/skills/list', skillRoute('skills/list', query));
      app.get('/resources/list', skillRoute('resources/list', query));
      app.post('/skills/get', json, skillRoute('skills/get', body));
      app.post('/resources/read', json, skillRoute('resources/read', body));
      app.post('/resources/directory/read', json, skillRoute('resources/directory/read', body));

      app.get('/skills/v1/packages/:name/:version/download', (req, res) => {
        const v = catalog.get(String(req.params.name), String(req.params.version));
        const etag = `"sha256-${v.sha256}"`;
        res.set({
          'Content-Type': 'application/gzip',
          'Content-Disposition': `attachment; filename="${v.name}-${v.version}.tgz"`,
          'Content-Length': String(v.size),
          ETag: etag,
          // RFC 9530 and its predecessor RFC 3230, plus the plain hex form scripts compare with sha256sum.
          'Repr-Digest': `sha-256=:${Buffer.from(v.sha256, 'hex').toString('base64')}:`,
          Digest: `sha-256=${Buffer.from(v.sha256, 'hex').toString('base64')}`,
          'X-Checksum-Sha256': v.sha256,
          'X-Integrity': integrityOf(v.sha256),
          'Cache-Control': 'public, max-age=31536000, immutable',
        });
        if (req.get('if-none-match') === etag) return void res.status(304).end();
        res.end(v.archive);
      });

      app.post('/skills/v1/install-plan', express.json({ limit: config.BODY_LIMIT }), (req, res) => {
        const input = parseOrThrow(
          installPlanInput,
          req.body ?? {},
          'install plan; send {"skills": [{"name", "range"}], "target": "<folder>"}',
        );
        res.json({ success: true, result: installPlan(catalog, input, baseUrl), timestamp: new Date().toISOString(), service: SERVICE_ID });
      });

      /** Changes to the catalog: the admin credential always, and market:write when JWT is on. False: refused (answered). */
      const mayWrite = async (req: express.Request, res: express.Response): Promise<boolean> => {
        try {
          if (verifier.enabled) await verifier.check(req.get('authorization'), WRITE_SCOPE);
          admin.check(req.get('x-admin-token') ?? (verifier.enabled ? undefined : req.get('authorization')?.replace(/^Bearer\s+/i, '')));
          return true;
        } catch (err) {
          sendAuthError(res, err, handle.sendError);
          return false;
        }
      };
      const answer = (res: express.Response, result: unknown, status = 200) =>
        res.status(status).json({ success: true, result, timestamp: new Date().toISOString(), service: SERVICE_ID });

      // Publish: PUT the tar.gz of a skill folder.
      app.put(
        '/skills/v1/packages/:name/:version',
        express.raw({ type: () => true, limit: config.MARKETPLACE_MAX_ARCHIVE_BYTES }),
        async (req, res) => {
          if (!(await mayWrite(req, res))) return;
          if (!Buffer.isBuffer(req.body) || req.body.length === 0) {
            throw new AppError('VALIDATION_ERROR', 'Send the skill folder as a tar.gz request body (Content-Type: application/gzip).');
          }
          const { created, version } = await catalog.publish(String(req.params.name), String(req.params.version), req.body);
          answer(
            res,
            {
              created,
              name: version.name,
              version: version.version,
              sha256: version.sha256,
              size: version.size,
              publishedAt: version.publishedAt,
            },
            created ? 201 : 200,
          );
        },
      );

      // Yank (PUT, optional {"reason"}) and take the yank back (DELETE): ranges and "latest" skip a yanked
      // version, an exact pin still installs it, its archive stays downloadable.
      const yank = (yanked: boolean) => async (req: express.Request, res: express.Response) => {
        if (!(await mayWrite(req, res))) return;
        const body = parseOrThrow(yankInput, req.body ?? {}, 'yank; send {"reason": "<why>"} or nothing');
        const { changed, version } = await catalog.setYanked(String(req.params.name), String(req.params.version), yanked, body.reason);
        answer(res, {
          changed,
          name: version.name,
          version: version.version,
          yanked: version.yanked ?? false,
          latest: catalog.latest(version.name)?.version ?? null,
        });
      };
      const yankPath = '/skills/v1/packages/:name/:version/yank';
      app.put(yankPath, express.json({ limit: '16kb', type: () => true }), yank(true));
      app.delete(yankPath, express.json({ limit: '16kb', type: () => true }), yank(false));

      // Re-read the skills folder and the store (after an operator changed the folder).
      app.post('/skills/v1/reload', async (req, res) => {
        if (!(await mayWrite(req, res))) return;
        await catalog.refresh();
        answer(res, { skills: catalog.names().length, problems: catalog.problems, loadedAt: catalog.loadedAt });
      });

      // The sub-registry answers the official API's shapes, not the fleet envelope (errors keep the envelope, whose `error` is a string).
      const registryRoute = express.Router();
      registryRoute.get('/servers', (req, res) => {
        const q = parseOrThrow(registryQuery, coerceLimit(req.query), 'registry query');
        res.json(registry.list({ search: q.search, limit: q.limit, cursor: q.cursor, updatedSince: q.updated_since, version: q.version }));
      });
      registryRoute.get('/servers/*rest', (req, res) => {
        const parts = ([] as string[]).concat((req.params as { rest: string | string[] }).rest);
        const full = parts.join('/');
        if (registry.has(full)) return void res.json(registry.get(full));
        const last = parts.at(-1);
        if (last === 'versions' && parts.length > 1) return void res.json(registry.versions(parts.slice(0, -1).join('/')));
        if (last === 'latest' && parts.length > 1) return void res.json(registry.get(parts.slice(0, -1).join('/')));
        if (parts.length > 2 && parts.at(-2) === 'versions') return void res.json(registry.get(parts.slice(0, -2).join('/'), last));
        res.json(registry.get(full));
      });
      app.use('/registry/v0.1', registryRoute);

      // POST /mcp: 2026-07-28 requests here, the 2025 era through the kit's SDK server; one method table for both.
      const mcp = { name: SERVICE_ID, tools, bodyLimit: config.BODY_LIMIT, capabilities: SKILLS_CAPABILITIES };
      mountModernMcp(app, handle, {
        ...mcp,
        methods: mcpSkillMethods(skills, '2026-07-28'),
        cacheScope: verifier.enabled ? 'private' : 'public',
      });
      mountMcpEndpoint(app, handle, { ...mcp, methods: mcpSkillMethods(skills, '2025-11-25') });
    },
  });
  return Object.assign(kit, { catalog, registry, ready });
}

function coerceLimit(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) out[k] = Array.isArray(v) ? v.at(-1) : v;
  if (typeof out.limit === 'string' && /^\d{1,6}$/.test(out.limit)) out.limit = Number(out.limit);
  return out;
}
