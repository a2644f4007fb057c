import { z } from 'zod';

/** RFC 6749 scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;

export const scopeField = z.union([
  z
    .string()
    .max(2048)
    .refine(
      (s) =>
        s.trim() === '' ||
        s
          .trim()
          .split(/\s+/)
          .every((t) => SCOPE_TOKEN.test(t)),
      'scope tokens are printable ASCII without quotes or backslashes',
    ),
  z.array(z.string().regex(SCOPE_TOKEN, 'printable ASCII without spaces, quotes or backslashes')).max(64),
]);

export const audienceField = z.union([z.string().min(1).max(256), z.array(z.string().min(1).max(256)).min(1).max(16)]);

export const RESERVED_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'scope']);

/** "a b  c" or ["a","b"] -> unique scope tokens in order. */
export function scopesOf(scope: string | string[] | undefined): string[] {
  const list = scope === undefined ? [] : Array.isArray(scope) ? scope : scope.trim().split(/\s+/).filter(Boolean);
  return [...new Set(list)];
}
