import { z } from 'zod';
import type { Memory } from './store/memory-store';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export { boundedJson, MAX_JSON_DEPTH } from '@mcp-fleet/kit';

export const MAX_CONTENT_CHARS = 100_000;
export const MAX_TAGS = 50;
export const MAX_METADATA_BYTES = 16_384;

export const typeSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, '1-64 letters, digits, _ . : or -')
  .describe('Kind of memory, e.g. note, fact, preference (1-64 of A-Z a-z 0-9 _ . : -).');

export const tagSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .refine((t) => !CONTROL.test(t) && !t.includes(','), 'no commas or control characters')
  .describe('A tag (1-64 characters, no commas).');

export const keySchema = z
  .string()
  .min(1)
  .max(256)
  .refine((k) => !CONTROL.test(k), 'no control characters')
  .describe('Your own name for the entry (1-256 characters). Storing again with the same key updates that entry instead of adding one.');

export const memoryIdSchema = z.uuid().describe('Memory id (a UUID) as returned by store_memory, list_memories or search_memories.');

/** Cut a page at the character budget (always keeping one entry), so answers stay bounded. */
export function cutToBudget<T>(items: T[], size: (item: T) => number, budget: number): { kept: T[]; cut: boolean } {
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    used += size(items[i]);
    if (used > budget && i > 0) return { kept: items.slice(0, i), cut: true };
  }
  return { kept: items, cut: false };
}

export const memorySize = (m: Memory) => m.content.length + JSON.stringify(m.metadata).length + 200;
