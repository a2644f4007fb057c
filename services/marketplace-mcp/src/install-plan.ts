import path from 'node:path';
import semver from 'semver';
import { z } from 'zod';
import type { SkillCatalog, SkillVersion } from './catalog';
import { downloadPath, integrityOf } from './views';

/** Where each client reads skills from, relative to the project (or home) folder. */
export const CLIENT_SKILL_DIRS = {
  'claude-code': '.claude/skills',
  codex: '.codex/skills',
  'gemini-cli': '.gemini/skills',
  generic: 'skills',
} as const;

const skillRequest = z.union([
  z.string().min(1).max(300).describe('"name" or "name@range".'),
  z
    .object({
      name: z.string().min(1).max(64).describe('Skill name.'),
      range: z.string().min(1).max(256).default('latest').describe('Exact version, "latest" or a semver range.'),
    })
    .strict(),
]);

export const installPlanInput = z
  .object({
    skills: z.array(skillRequest).min(1).max(100).describe('Skills to install: "name", "name@range" or {name, range}; at most 100.'),
    target: z
      .string()
      .min(1)
      .max(1024)
      .refine((s) => !s.includes('\0'), 'no NUL bytes')
      .optional()
      .describe("The client's skills folder; default: the client's own folder (client)."),
    client: z
      .enum(Object.keys(CLIENT_SKILL_DIRS) as [keyof typeof CLIENT_SKILL_DIRS])
      .default('claude-code')
      .describe('The agent client.'),
  })
  .strict();

export type InstallPlanInput = z.output<typeof installPlanInput>;

function split(req: z.output<typeof skillRequest>): { name: string; range: string } {
  if (typeof req !== 'string') return req;
  const at = req.indexOf('@', 1);
  return at < 0 ? { name: req, range: 'latest' } : { name: req.slice(0, at), range: req.slice(at + 1) || 'latest' };
}

/** Whether `v` answers a request for `range`: "latest" is the latest version itself, an exact version only that one, a range any unyanked version in it. */
function answers(catalog: SkillCatalog, name: string, range: string, v: SkillVersion): boolean {
  if (range === 'latest' || range === '' || range === '*') return catalog.latest(name) === v;
  if (semver.valid(range) === range) return v.version === range;
  return !v.yanked && semver.satisfies(v.version, range);
}

/**
 * The version for every request of one skill. Each skill is installed into one folder
 * (`<target>/<name>`), which holds one version, so several requests for a skill are answered
 * together: one range as the catalog resolves it, several by the highest version that answers
 * them all (as a package manager dedupes a dependency asked for twice), or unsatisfiable with what
 * each range alone would pick.
 */
function resolveAll(catalog: SkillCatalog, name: string, ranges: string[]): ReturnType<SkillCatalog['resolve']> & { reason?: string } {
  if (ranges.length === 1) return catalog.resolve(name, ranges[0]);
  const each = ranges.map((range) => ({ range, r: catalog.resolve(name, range) }));
  if (each.some(({ r }) => r.status === 'unknown')) return { status: 'unknown' };
  const picked = catalog.versions(name).find((v) => ranges.every((range) => answers(catalog, name, range, v)));
  if (picked) return { status: 'ok', version: picked };
  const alone = each.map(({ range, r }) => `${range} alone picks ${r.status === 'ok' ? r.version.version : 'nothing'}`).join(', ');
  return {
    status: 'unsatisfiable',
    available: catalog
      .versions(name)
      .filter((v) => !v.yanked)
      .map((v) => v.version),
    reason: `no version satisfies every range asked for (${alone}); a skill's folder holds one version: ask for it once, with one range`,
  };
}

/**
 * Resolves each requested skill like a package manager: the highest version the range allows
 * ("latest": the highest non-prerelease). Unknown names and unsatisfiable or malformed ranges are
 * listed, never thrown, so one bad entry does not hide the rest of the plan. A skill asked for more
 * than once gets one version that answers every request (resolveAll), listed with `requested`.
 */
export function installPlan(catalog: SkillCatalog, input: InstallPlanInput, baseUrl: string) {
  const target = (input.target ?? CLIENT_SKILL_DIRS[input.client]).replace(/\/+$/, '') || '/';
  const install = [];
  const unknown: string[] = [];
  const unsatisfiable: { name: string; range: string; available: string[]; reason: string }[] = [];
  // every distinct range asked for each skill, skills in the order first asked for
  const requests = new Map<string, string[]>();
  for (const raw of input.skills) {
    const { name, range } = split(raw);
    const ranges = requests.get(name) ?? [];
    if (!ranges.includes(range)) ranges.push(range);
    requests.set(name, ranges);
  }
  for (const [name, asked] of requests) {
    const ranges = asked.filter((range) => {
      if (range === 'latest' || semver.validRange(range) !== null) return true;
      unsatisfiable.push({ name, range, available: catalog.versions(name).map((v) => v.version), reason: 'not a semver version or range' });
      return false;
    });
    if (ranges.length === 0) continue;
    const r = resolveAll(catalog, name, ranges);
    if (r.status === 'unknown') {
      unknown.push(name);
      continue;
    }
    if (r.status === 'unsatisfiable') {
      unsatisfiable.push({
        name,
        range: ranges.join(' and '),
        available: r.available,
        reason: r.reason ?? 'no version satisfies the range',
      });
      continue;
    }
    const range = ranges[0];
    const v = r.version;
    const destination = path.posix.join(target, name);
    install.push({
      name,
      range,
      // the skill was asked for with several ranges: this one version answers them all
      ...(ranges.length > 1 ? { requested: ranges } : {}),
      version: v.version,
      url: `${baseUrl}${downloadPath(name, v.version)}`,
      sha256: v.sha256,
      integrity: integrityOf(v.sha256),
      size: v.size,
      // pinned exactly to a yanked version: installed as asked, with the warning
      ...(v.yanked ? { yanked: v.yanked } : {}),
      destination,
      files: v.files.map((f) => ({
        path: path.posix.join(destination, f.path),
        size: f.size,
        sha256: f.sha256,
        mode: f.executable ? '0755' : '0644',
      })),
      verify: [
        { step: 'download', detail: `GET ${downloadPath(name, v.version)} (${v.size} bytes)` },
        {
          step: 'sha256',
          detail: `sha256 of the archive equals ${v.sha256} (also sent as the X-Checksum-Sha256 header); otherwise discard it`,
        },
        { step: 'inspect', detail: 'every entry is a regular file or folder with a relative path: no absolute path, "..", link or device' },
        { step: 'extract', detail: `unpack into a temporary folder, then move it to ${destination}` },
        { step: 'skill-md', detail: `${destination}/SKILL.md front matter name is "${name}"` },
      ],
      command: `scripts/marketplace/install_skill_from_market.sh --skill ${name} --version ${v.version} --dest ${target}`,
    });
  }
  return { target, client: input.client, install, unknown, unsatisfiable, complete: unknown.length === 0 && unsatisfiable.length === 0 };
}
