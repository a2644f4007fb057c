import { z } from 'zod';

/** A path inside the workspace roots, as the contract's file tools take it. */
export const pathField = (what: string) =>
  z
    .string()
    .min(1)
    .max(4096)
    .describe(`${what} Relative paths resolve against the first workspace root; absolute paths must lie inside a root.`);

/** The contract's `repository`: a git repository inside the workspace roots. */
export const repositoryField = z
  .string()
  .min(1)
  .max(4096)
  .describe('Repository directory (or a directory inside it): relative to the first workspace root, or absolute inside a root.');

/** The contract's `database`: a named connection of database-mcp. */
export const databaseField = z
  .string()
  .min(1)
  .max(63)
  .optional()
  .describe('Named connection (default "sandbox", the embedded SQLite database); database-mcp\'s GET /health lists the configured names.');

/** The contract's `query` of search_memories and research_query: plain words. */
export const wordsField = (max: number) =>
  z.string().trim().min(1).max(max).describe(`What to look for, in plain words (1-${max} characters).`);
