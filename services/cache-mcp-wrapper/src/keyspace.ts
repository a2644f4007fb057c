import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import { compileGlob, escapeGlob } from './store/glob';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export const keySchema = z
  .string()
  .min(1)
  .max(512)
  .refine((k) => !CONTROL.test(k), 'must not contain control characters')
  .describe("Cache key (1-512 characters, no control characters). It lives in this service's namespace; other data is unreachable.");

export const patternSchema = z
  .string()
  .min(1)
  .max(512)
  .refine((k) => !CONTROL.test(k), 'must not contain control characters')
  .describe('Redis-style glob over your keys only: * any run, ? one character, [abc] / [^a-z] sets, \\ escapes. Default *.');

export const ttlSecondsSchema = z
  .number()
  .positive()
  .max(315_360_000)
  .describe('Time to live in seconds (fractions allowed, millisecond precision; at most 10 years).');

export { boundedJson, MAX_JSON_DEPTH } from '@mcp-fleet/kit';

export function ttlMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * Where this service's data lives: `<ns>:cache:<key>` and `<ns>:session:<id>`. Callers name keys
 * and patterns only after the prefix, so no key or pattern can reach outside it.
 */
export class Keyspace {
  readonly cachePrefix: string;
  readonly sessionPrefix: string;

  constructor(namespace: string) {
    this.cachePrefix = `${namespace}:cache:`;
    this.sessionPrefix = `${namespace}:session:`;
  }

  cacheKey(key: string): string {
    return this.cachePrefix + key;
  }

  fromCacheKey(full: string): string {
    return full.slice(this.cachePrefix.length);
  }

  /** The caller's glob, checked, anchored behind the escaped namespace prefix. */
  cachePattern(pattern: string): string {
    compileGlob(pattern);
    return escapeGlob(this.cachePrefix) + pattern;
  }

  sessionKey(id: string): string {
    return this.sessionPrefix + id;
  }

  fromSessionKey(full: string): string {
    return full.slice(this.sessionPrefix.length);
  }

  sessionPattern(): string {
    return `${escapeGlob(this.sessionPrefix)}*`;
  }
}

/** JSON text of a value, refused over the size cap before anything is written. */
export function serialize(value: unknown, maxBytes: number, what = 'value'): string {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The ${what} is ${bytes} bytes as JSON, over the ${maxBytes}-byte cap (CACHE_MAX_VALUE_BYTES); store less.`,
      {
        details: [{ path: what, message: `at most ${maxBytes} bytes` }],
      },
    );
  }
  return text;
}

/** Stored JSON back to a value; text that is not JSON comes back as the string it is. */
export function deserialize(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
