import { z } from 'zod';
import { AppError, type ErrorDetail } from './errors';

export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

/** Parse with a zod schema; failures become VALIDATION_ERROR with field-level details. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'arguments'): z.output<S> {
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
      for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
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
