import type { z } from 'zod';
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
