import semver from 'semver';
import { parseDocument } from 'yaml';
import { z } from 'zod';

/** One problem with a skill, named by its file and field (catalog_validate and publish report these). */
export interface SkillProblem {
  file: string;
  field: string;
  message: string;
}

export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The Agent Skills front matter: name and description, plus the format's optional fields. */
export const frontMatterSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(SKILL_NAME, 'lowercase letters, digits and single hyphens, not at the start or end')
      .describe('Skill name; equals its folder name.'),
    description: z.string().trim().min(1).max(1024).describe('What the skill does and when to use it (1-1024 characters).'),
    license: z.string().min(1).max(256).optional().describe('License name or bundled license file.'),
    compatibility: z.string().min(1).max(500).optional().describe('Environment requirements (1-500 characters).'),
    metadata: z
      .record(z.string().min(1).max(64), z.string().max(1024))
      .optional()
      .describe('String-to-string map; metadata.version is the skill version (semver).'),
    'allowed-tools': z.string().max(2048).optional().describe('Space-separated tools the skill may use.'),
  })
  .strict();

export type FrontMatter = z.output<typeof frontMatterSchema>;

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(\r?\n|$)/;

/**
 * Reads SKILL.md's YAML front matter and checks it; every problem names the file and field.
 * `expectedName` is the folder name the format requires the skill's name to equal.
 */
export function parseSkillMd(
  text: string,
  file: string,
  expectedName?: string,
): { frontMatter?: FrontMatter; frontmatterAsWritten?: Record<string, unknown>; body: string; problems: SkillProblem[] } {
  const m = FENCE.exec(text.replace(/^\uFEFF/, ''));
  if (!m) {
    return {
      body: text,
      problems: [{ file, field: '(front matter)', message: 'SKILL.md must start with YAML front matter between --- lines' }],
    };
  }
  // YAML aliases are refused outright: a billion-laughs document cannot expand.
  const doc = parseDocument(m[1], { uniqueKeys: true, prettyErrors: false, schema: 'core' });
  if (doc.errors.length) {
    return { body: text, problems: [{ file, field: '(front matter)', message: `invalid YAML: ${doc.errors[0].message.split('\n')[0]}` }] };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 0 });
  } catch (err) {
    return { body: text, problems: [{ file, field: '(front matter)', message: `invalid YAML: ${(err as Error).message.split('\n')[0]}` }] };
  }
  const parsed = frontMatterSchema.safeParse(data);
  const body = text.slice(m[0].length);
  if (!parsed.success) {
    return {
      body,
      problems: parsed.error.issues.map((i) => ({
        file,
        field: i.path.length ? i.path.map(String).join('.') : i.code === 'unrecognized_keys' ? (i.keys ?? []).join(', ') : '(front matter)',
        message: i.message,
      })),
    };
  }
  const problems: SkillProblem[] = [];
  if (expectedName !== undefined && parsed.data.name !== expectedName) {
    problems.push({ file, field: 'name', message: `must equal the skill's folder name "${expectedName}"` });
  }
  // as YAML 1.2 (core schema) gives it, untouched by the checks (the Skills extension serves it verbatim)
  return { frontMatter: parsed.data, frontmatterAsWritten: data as Record<string, unknown>, body, problems };
}

/** A published version string: strict semver, normalised (no "v", no ranges). */
export function checkVersion(raw: string | undefined, file: string, field: string): { version?: string; problem?: SkillProblem } {
  if (raw === undefined) return { problem: { file, field, message: 'is required: the skill version (semver, e.g. 1.0.0)' } };
  const v = semver.valid(raw);
  if (!v || v !== raw) return { problem: { file, field, message: `"${raw.slice(0, 64)}" is not a semver version such as 1.2.3` } };
  return { version: v };
}

/** One argument a skill's prompt takes (metadata.arguments). */
export interface SkillArgument {
  name: string;
  description?: string;
  required: boolean;
}

const ARGUMENT = /^([A-Za-z0-9_-]{1,64})(\?)?\s*(?::\s*(.{0,500}))?$/s;
export const MAX_SKILL_ARGUMENTS = 20;

/**
 * metadata.arguments: the arguments of the skill's prompt, comma-separated, each `name` (required)
 * or `name?` (optional), optionally followed by `: description` (no commas in it), e.g.
 * `"table: the table to review, dialect?: postgres or sqlite"`. Absent: none declared.
 */
export function parseSkillArguments(raw: string | undefined, file: string): { args: SkillArgument[]; problems: SkillProblem[] } {
  if (raw === undefined) return { args: [], problems: [] };
  const args: SkillArgument[] = [];
  const problems: SkillProblem[] = [];
  const field = 'metadata.arguments';
  for (const part of raw.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const m = ARGUMENT.exec(entry);
    if (!m) {
      problems.push({
        file,
        field,
        message: `"${entry.slice(0, 64)}" is not "name", "name?" or "name: description" (names: letters, digits, _ and -)`,
      });
      continue;
    }
    if (args.some((a) => a.name === m[1])) {
      problems.push({ file, field, message: `argument "${m[1]}" is declared twice` });
      continue;
    }
    args.push({ name: m[1], required: m[2] !== '?', ...(m[3]?.trim() ? { description: m[3].trim() } : {}) });
  }
  if (args.length > MAX_SKILL_ARGUMENTS) problems.push({ file, field, message: `at most ${MAX_SKILL_ARGUMENTS} arguments` });
  return { args, problems };
}
