/**
 * The shapes of the MCP Skills extension (io.modelcontextprotocol/skills, SEP-2640), shared by a
 * service that serves skills and the gateway that aggregates them.
 */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** The extension's per-skill limits: hosts must load skills up to these; larger ones are not served. */
export const SKILL_LIMITS = { resources: 512, bytes: 16 * 1024 * 1024 } as const;
/** The MIME type of a directory resource (resources/directory/read). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';

/** One file of a skill: its URI, and the sha256 (`sha256:<hex>`) and size of its bytes. */
export interface SkillResource {
  uri: string;
  digest: string;
  size: number;
}

/** A skill's entry (skills/list, skills/get): its SKILL.md URI, its front matter as written, its files. */
export interface SkillEntry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: SkillResource[] | 'dynamic';
}
