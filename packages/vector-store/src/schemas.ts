import { z } from 'zod';
import { pointIdSchema } from './ids';
import type { Condition, Filter } from './types';

export const MAX_DIMENSIONS = 4096;
export const MAX_FILTER_DEPTH = 8;
export const MAX_PAYLOAD_DEPTH = 32;

export const collectionNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'collection names are 1-64 characters: letters, digits, "_" and "-"' })
  .describe('Collection name: 1-64 letters, digits, "_" or "-".');

export const distanceSchema = z
  .enum(['Cosine', 'Euclid', 'Dot'])
  .describe('Distance: Cosine (similarity, higher is better), Euclid (distance, lower is better) or Dot (product, higher is better).');

export const vectorSchema = z
  .array(z.number({ error: 'vector components must be finite numbers (no NaN, Infinity or strings)' }))
  .min(1)
  .max(MAX_DIMENSIONS)
  .describe(`Vector: 1-${MAX_DIMENSIONS} finite numbers (float32 range); its length must equal the collection size.`);

/** Iterative, so a hostile 100k-level document cannot overflow the stack. */
export function exceedsDepth(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export const payloadSchema = z
  .preprocess(
    (value, ctx) => {
      if (exceedsDepth(value, MAX_PAYLOAD_DEPTH)) {
        ctx.addIssue({ code: 'custom', message: `payload nests deeper than ${MAX_PAYLOAD_DEPTH} levels; flatten it`, input: value });
      }
      return value;
    },
    // z.json(), not z.unknown(): the listing then says what a value is (model APIs refuse `{}`); the depth is checked above
    z.record(z.string(), z.json()),
  )
  .describe('Payload: a JSON object stored with the point (size capped, see the tool description).');

const KEY_SEGMENT = /^[^.[\]]+(\[\])?$/;

const keySchema = z
  .string()
  .min(1)
  .max(256)
  .refine((k) => k.split('.').every((s) => KEY_SEGMENT.test(s)), {
    error: 'a key is a dotted path such as "meta.author"; use "tags[]" to descend into array elements',
  })
  .describe('Payload key: dots descend into objects, "name[]" into every array element.');

const matchSchema = z.union(
  [
    z
      .object({
        value: z.union([z.string().max(4096), z.number().int(), z.boolean()]).describe('Exact value: string, integer or boolean.'),
      })
      .strict(),
    z
      .object({
        any: z
          .union([z.array(z.string().max(4096)).max(1024), z.array(z.number().int()).max(1024)])
          .describe('Matches when the value equals any of these (all strings or all integers).'),
      })
      .strict(),
  ],
  { error: 'match is {"value": string|integer|boolean} or {"any": [strings] | [integers]}' },
);

const rangeSchema = z
  .object({
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
  })
  .strict()
  .refine((r) => Object.keys(r).length > 0, { error: 'range needs at least one of gt, gte, lt, lte' });

const fieldConditionSchema = z
  .object({ key: keySchema, match: matchSchema.optional(), range: rangeSchema.optional().describe('Numeric range on the value.') })
  .strict()
  .refine((c) => (c.match === undefined) !== (c.range === undefined), { error: 'a field condition has exactly one of match or range' });

const hasIdSchema = z
  .object({ has_id: z.array(pointIdSchema).min(1).max(1000).describe('Matches points with one of these ids.') })
  .strict();

const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([fieldConditionSchema, hasIdSchema, innerFilterSchema], {
    error: 'a condition is {"key", "match"|"range"}, {"has_id": [...]} or a nested filter {"must"|"should"|"must_not": [...]}',
  }),
);

const conditions = (what: string) => z.array(conditionSchema).max(256).optional().describe(what);

const innerFilterSchema: z.ZodType<Filter> = z
  .object({
    must: conditions('Every condition must match.'),
    should: conditions('At least one condition must match (when non-empty).'),
    must_not: conditions('No condition may match.'),
  })
  .strict();

function countConditions(filter: Filter): number {
  let n = 0;
  const stack: Filter[] = [filter];
  while (stack.length > 0) {
    const f = stack.pop()!;
    for (const list of [f.must, f.should, f.must_not]) {
      for (const c of list ?? []) {
        n += 1;
        if ('must' in c || 'should' in c || 'must_not' in c) stack.push(c as Filter);
      }
    }
  }
  return n;
}

/** Qdrant's filter subset; depth checked before the recursive parse so nothing can overflow the stack. */
export const filterSchema: z.ZodType<Filter> = z
  .preprocess((value, ctx) => {
    if (exceedsDepth(value, 2 * MAX_FILTER_DEPTH + 3)) {
      ctx.addIssue({ code: 'custom', message: `filter nests more than ${MAX_FILTER_DEPTH} levels`, input: value });
    }
    return value;
  }, innerFilterSchema)
  .refine((f) => countConditions(f) <= 256, { error: 'a filter holds at most 256 conditions in all' })
  .describe(
    'Qdrant-style filter: {"must"|"should"|"must_not": [conditions]}; a condition is {"key", "match": {"value"}|{"any": [...]}}, {"key", "range": {gt,gte,lt,lte}}, {"has_id": [ids]} or a nested filter.',
  );
