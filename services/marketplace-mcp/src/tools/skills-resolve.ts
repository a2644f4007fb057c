import { AppError, defineTool } from '@mcp-fleet/kit';
import semver from 'semver';
import { z } from 'zod';
import { packageView } from '../views';
import type { ToolDeps } from './context';

export const skillsResolveTool = (deps: ToolDeps) =>
  defineTool({
    name: 'skills_resolve',
    title: 'Resolve a skill version',
    description:
      'One skill version (GET /skills/v1/packages/{name}/{version}): an exact version, "latest" (highest non-prerelease) or an npm ' +
      'semver range (e.g. ^1.2, ~1.0.3, >=2 <3); answers its metadata, files, sha256, integrity and download URL. A yanked version ' +
      '(yanked: {at, reason}) is picked only by its exact version, never by a range or "latest". NOT_FOUND for an ' +
      'unknown skill or a range no version satisfies; VALIDATION_ERROR for a malformed range (at most 256 characters).',
    input: z
      .object({
        name: z.string().min(1).max(64).describe('Skill name (lowercase letters, digits, hyphens).'),
        version: z.string().min(1).max(256).default('latest').describe('Exact version, "latest" (default) or a semver range.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: ({ name, version }) => {
      if (version !== 'latest' && semver.validRange(version) === null) {
        throw new AppError('VALIDATION_ERROR', `"${version.slice(0, 64)}" is neither a version nor a semver range such as ^1.2.0.`, {
          details: [{ path: 'version', message: 'not a semver version or range' }],
        });
      }
      const r = deps.catalog.resolve(name, version);
      if (r.status === 'unknown') throw new AppError('NOT_FOUND', `No skill named "${name}"; skills_list shows the catalog.`);
      if (r.status === 'unsatisfiable') {
        throw new AppError('NOT_FOUND', `No version of ${name} satisfies "${version}"; it has ${r.available.join(', ')}.`, {
          details: { available: r.available },
        });
      }
      return packageView(deps.catalog, r.version, deps.baseUrl);
    },
  });
