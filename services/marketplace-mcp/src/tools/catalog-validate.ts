import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { parseSkillMd } from '../skill-format';
import type { ToolDeps } from './context';

export const catalogValidateTool = (deps: ToolDeps) =>
  defineTool({
    name: 'catalog_validate',
    title: 'Validate the catalog',
    description:
      'Checks the catalog: the skills left out at load with their file and field, the sub-registry entries refused, and whether ' +
      "every version's source (skill folder or stored archive) still packs to the sha256 it is served with. With skillMd (up to " +
      '64 KiB) it checks that SKILL.md text instead, before publishing. reload re-reads the skills folder first.',
    input: z
      .object({
        name: z.string().min(1).max(64).optional().describe('Check only this skill.'),
        skillMd: z.string().max(65_536).optional().describe('A SKILL.md to check (front matter and version) instead of the catalog.'),
        reload: z.boolean().default(false).describe('Re-read the skills folder and published store before checking.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    timeoutMs: 60_000,
    handler: async ({ name, skillMd, reload }) => {
      if (skillMd !== undefined) {
        const parsed = parseSkillMd(skillMd, 'SKILL.md');
        const version = parsed.frontMatter?.metadata?.version;
        return {
          valid: parsed.problems.length === 0,
          problems: parsed.problems,
          frontMatter: parsed.frontMatter ?? null,
          version: version ?? null,
        };
      }
      if (reload) await deps.catalog.reload();
      const { checked, mismatches } = await deps.catalog.verify(name);
      const problems = name ? deps.catalog.problems.filter((p) => p.file.split('/')[0] === name) : deps.catalog.problems;
      return {
        valid: problems.length === 0 && mismatches.length === 0 && deps.registry.problems.length === 0,
        skills: deps.catalog.names().length,
        versionsChecked: checked,
        problems,
        mismatches,
        registryProblems: deps.registry.problems,
        loadedAt: deps.catalog.loadedAt,
      };
    },
  });
