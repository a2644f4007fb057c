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
