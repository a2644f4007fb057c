import type { PromptListing, PromptResult, PromptSource } from '@mcp-fleet/kit';
import type { SkillCatalog, SkillVersion } from './catalog';
import { parseSkillArguments } from './skill-format';

/** The argument a skill that declares none takes: free text, appended to its instructions. */
export const FREE_TEXT_ARGUMENT = {
  name: 'input',
  description: 'Optional: what you want done with this skill (free text, appended to its instructions).',
  required: false,
} as const;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_-]{1,64})\s*\}\}/g;

function argumentsOf(v: SkillVersion) {
  const declared = parseSkillArguments(v.frontMatter.metadata?.arguments, v.origin).args;
  return declared.length ? declared : [{ ...FREE_TEXT_ARGUMENT }];
}

/** One skill as an MCP prompt listing. */
export function skillPrompt(v: SkillVersion): PromptListing {
  return {
    name: v.name,
    title: v.frontMatter.metadata?.title ?? v.name,
    description: v.description,
    arguments: argumentsOf(v).map((a) => ({
      name: a.name,
      ...(a.description ? { description: a.description } : {}),
      required: a.required,
    })),
  };
}

/**
 * SKILL.md's body as one user message: `{{name}}` placeholders take the arguments (an absent optional
 * one becomes empty); a value no placeholder uses is appended after the instructions.
 */
export function renderSkill(v: SkillVersion, args: Record<string, string>): PromptResult {
  const declared = argumentsOf(v).map((a) => a.name);
  const used = new Set<string>();
  let text = v.body.trim().replace(PLACEHOLDER, (whole, name: string) => {
    if (!declared.includes(name)) return whole;
    used.add(name);
    return args[name] ?? '';
  });
  const rest = declared.filter((n) => !used.has(n) && args[n] !== undefined && args[n] !== '');
  if (rest.length === 1 && rest[0] === FREE_TEXT_ARGUMENT.name && declared.length === 1) text += `\n\n---\n\n${args[rest[0]]}`;
  else if (rest.length) text += `\n\n---\n\nArguments:\n${rest.map((n) => `- ${n}: ${args[n]}`).join('\n')}`;
  return {
    description: `${v.name}@${v.version}: ${v.description}`,
    messages: [{ role: 'user', content: { type: 'text', text } }],
  };
}

/**
 * The catalog's skills as MCP prompts (GET /prompts/list, POST /prompts/get through the kit): one per
 * skill, its latest version, read from the catalog on every request so a publish shows at once.
 */
export function skillPrompts(catalog: SkillCatalog): PromptSource {
  return {
    list: () =>
      catalog
        .names()
        .map((n) => catalog.head(n))
        .filter((v): v is SkillVersion => v !== undefined)
        .map(skillPrompt),
    get: (name, args) => renderSkill(catalog.head(name)!, args),
  };
}
