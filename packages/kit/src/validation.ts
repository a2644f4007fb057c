import { z } from 'zod';
import { AppError, type ErrorDetail } from './errors';

export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

/**
 * How deep any input parsed at the edge may nest. Deeper input is refused before a schema or a
 * handler walks it, so no recursion over caller data (zod's, JSON.stringify's) can overflow the
 * stack; a stack overflow after this point is the service's fault (INTERNAL), not the caller's.
 */
export const MAX_INPUT_DEPTH = 256;

/** Parse with a zod schema; failures become VALIDATION_ERROR with field-level details. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'arguments'): z.output<S> {
  if (!withinDepth(value, MAX_INPUT_DEPTH)) {
    throw new AppError('VALIDATION_ERROR', `Invalid ${what}: nested deeper than ${MAX_INPUT_DEPTH} levels; flatten it.`, {
      details: [{ path: '(root)', message: `nested deeper than ${MAX_INPUT_DEPTH} levels`, code: 'too_deep' }],
    });
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = zodIssuesToDetails(parsed.error.issues);
  const first = details[0];
  const hint = first ? ` First problem: ${first.path}: ${first.message}.` : '';
  throw new AppError('VALIDATION_ERROR', `Invalid ${what}.${hint} See details for every field.`, { details });
}

export const MAX_JSON_DEPTH = 64;

/** Iterative depth check, so hostile nesting cannot overflow the stack before validation. */
export function withinDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v !== null && typeof v === 'object') {
      if (depth > max) return false;
      for (const child of Array.isArray(v) ? v : Object.values(v))
        if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return true;
}

/** z.json() with a nesting limit: arbitrary JSON values (payloads, metadata) from callers. */
export const boundedJson = (max: number = MAX_JSON_DEPTH) =>
  z.preprocess((value, ctx) => {
    if (withinDepth(value, max)) return value;
    ctx.addIssue({ code: 'custom', message: `nested deeper than ${max} levels` });
    return z.NEVER;
  }, z.json());

type JsonSchema = Record<string, unknown>;

/**
 * What a tool built with actionInput receives: the discriminated union's own output (one typed
 * object per action), though the schema listed for it is one plain object.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ActionInput<U extends z.ZodDiscriminatedUnion<any>> = z.ZodObject<Record<string, z.ZodType>> & {
  _zod: { output: z.output<U>; input: z.input<U> };
};

const JSON_SCHEMA_OPTIONS = { io: 'input', unrepresentable: 'any' } as const;

/** Text as a sentence: ends with a full stop unless it ends with punctuation already. */
const sentence = (text: string): string => (/[.!?)]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

function withoutDescription({ description: _description, ...rest }: JsonSchema): JsonSchema {
  return rest;
}

/** Which actions take a field, and for which it is required, said in words for the model. */
function usage(actions: string[], required: string[]): string {
  if (required.length === actions.length) return `For ${actions.join(', ')} (required).`;
  return required.length ? `For ${actions.join(', ')}; required for ${required.join(', ')}.` : `For ${actions.join(', ')}.`;
}

/**
 * A tool input with several actions (a discriminated union, one strict object per action), listed as
 * ONE object: the discriminator as an enum and every other field optional, each described with the
 * actions that take it. Model providers refuse input schemas with a top-level oneOf/anyOf/allOf, and
 * clients drop such tools without a word. Validation is still the union's, once at the edge: the
 * object's check parses the arguments with it (per-action required fields, defaults, strictness) and
 * hands the handler its typed output.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function actionInput<U extends z.ZodDiscriminatedUnion<any>>(union: U): ActionInput<U> {
  const key = union._zod.def.discriminator;
  const json = z.toJSONSchema(union, JSON_SCHEMA_OPTIONS) as JsonSchema;
  const branches = (json.oneOf ?? json.anyOf) as JsonSchema[];
  const actions: string[] = [];
  const lines: string[] = [];
  const fields = new Map<string, { schemas: JsonSchema[]; actions: string[]; required: string[] }>();
  for (const branch of branches) {
    const properties = branch.properties as Record<string, JsonSchema>;
    const action = properties[key].const as string;
    actions.push(action);
    // what the action does: said on its object or on its literal
    const what = (branch.description ?? properties[key].description) as string | undefined;
    if (what) lines.push(sentence(what.startsWith(`${action}:`) ? what : `${action}: ${what}`));
    const required = new Set((branch.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries(properties)) {
      if (name === key) continue;
      const field = fields.get(name) ?? { schemas: [], actions: [], required: [] };
      field.schemas.push(schema);
      field.actions.push(action);
      if (required.has(name)) field.required.push(action);
      fields.set(name, field);
    }
  }
  const shape: Record<string, z.ZodType> = {
    [key]: z.enum(actions as [string, ...string[]]).describe([`What to do: ${actions.join(' | ')}.`, ...lines].join(' ')),
  };
  for (const [name, field] of fields) {
    const distinct = [...new Map(field.schemas.map((s) => [JSON.stringify(withoutDescription(s)), withoutDescription(s)])).values()];
    // one description when the actions agree on it, else each action's own, named
    const said = new Map<string, string[]>();
    field.schemas.forEach((s, i) => {
      if (typeof s.description === 'string') said.set(s.description, [...(said.get(s.description) ?? []), field.actions[i]]);
    });
    const described =
      said.size <= 1 ? [...said.keys()].map(sentence) : [...said].map(([text, by]) => `${by.join(', ')}: ${sentence(text)}`);
    const listed = distinct.length === 1 ? distinct[0] : { anyOf: distinct };
    const description = [...described, usage(field.actions, field.required)].join(' ');
    // Only listed here: the union below validates the value (z.unknown never transforms it first).
    shape[name] = z
      .unknown()
      .optional()
      .meta({ ...listed, description });
  }
  const flat = z.object(shape).strict();
  const listed = json.$defs ? flat.meta({ $defs: json.$defs }) : flat;
  return listed.check((ctx) => {
    const parsed = union.safeParse(ctx.value);
    if (parsed.success) ctx.value = parsed.data as typeof ctx.value;
    else ctx.issues.push(...(parsed.error.issues as unknown as (typeof ctx.issues)[number][]));
  }) as unknown as ActionInput<U>;
}
