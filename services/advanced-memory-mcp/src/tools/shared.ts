import { z } from 'zod';

export const textSchema = (what: string) => z.string().min(1).max(16_000).describe(`${what} (1-16000 characters).`);
export const typeSchema = z
  .string()
  .regex(/^[\w.:-]{1,64}$/, { error: 'type is 1-64 letters, digits, "_", ".", ":" or "-"' })
  .describe('Memory type, e.g. note, fact, task (1-64 characters).');
export const tagsSchema = z.array(z.string().min(1).max(64)).max(32).describe('Tags (at most 32, each 1-64 characters).');
