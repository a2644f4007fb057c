import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import { lineColumn, locateJsonError } from './json-locate';
import { dotenv, toml, yaml } from './lazy-modules';
import { pointerSegment } from './secrets';

export const FORMATS = ['json', 'yaml', 'toml', 'env'] as const;
export type ConfigFormat = (typeof FORMATS)[number];
export const formatSchema = z.enum(FORMATS);

/** .env keys joined with this separator when nested data is flattened (and split on it by unflatten). */
export const ENV_SEPARATOR = '__';
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAX_ISSUES = 50;

export interface ParseIssue {
  path: string;
  message: string;
  line?: number;
  column?: number;
  code?: string;
}

/** json, yaml, toml or env from a file name; undefined when the name says nothing. */
export function formatFromPath(file: string): ConfigFormat | undefined {
  const base = path.basename(file).toLowerCase();
  if (base === '.env' || base.startsWith('.env.') || base.endsWith('.env')) return 'env';
  const ext = path.extname(base);
  if (ext === '.json') return 'json';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.toml') return 'toml';
  return undefined;
}

function parseError(format: ConfigFormat, field: string, issues: ParseIssue[]): AppError {
  const first = issues[0];
  const where = first?.line !== undefined ? ` at line ${first.line}, column ${first.column}` : '';
  return new AppError(
    'VALIDATION_ERROR',
    `The ${format.toUpperCase()} in ${field} does not parse${where}: ${first?.message ?? 'invalid'}. Fix it and retry.`,
    {
      details: issues.slice(0, MAX_ISSUES),
    },
  );
}

/** TOML dates and other non-JSON values become JSON values (dates as ISO strings). */
function toJsonValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return value;
}

/**
 * Parse config text. Errors are VALIDATION_ERROR with line and column, and never quote the input
 * (it may hold secrets).
 */
export function parseConfig(text: string, format: ConfigFormat, options: { field?: string; unflatten?: boolean } = {}): unknown {
  const field = options.field ?? 'content';
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  switch (format) {
    case 'json': {
      try {
        return JSON.parse(source);
      } catch {
        const loc = locateJsonError(source);
        throw parseError('json', field, [
          loc ? { path: field, message: loc.message, line: loc.line, column: loc.column } : { path: field, message: 'not valid JSON' },
        ]);
      }
    }
    case 'yaml': {
      const doc = yaml().parseDocument(source, { uniqueKeys: true, prettyErrors: false, strict: true });
      if (doc.errors.length > 0) {
        throw parseError(
          'yaml',
          field,
          doc.errors.map((e) => {
            const pos = e.linePos?.[0] ?? lineColumn(source, e.pos[0]);
            return {
              path: field,
              // The library appends the offending source line after " at line"; keep only its description.
              message: e.message.split(/ at line \d+/)[0],
              line: 'line' in pos ? pos.line : undefined,
              column: 'col' in pos ? pos.col : (pos as { column: number }).column,
              code: e.code,
            };
          }),
        );
      }
      try {
        return toJsonValue(doc.toJS({ maxAliasCount: 100 }));
      } catch (err) {
        throw parseError('yaml', field, [{ path: field, message: (err as Error).message.split('\n')[0] }]);
      }
    }
    case 'toml': {
      try {
        return toJsonValue(toml().parse(source));
      } catch (err) {
        if (err instanceof toml().TomlError) {
          throw parseError('toml', field, [{ path: field, message: err.message.split('\n')[0], line: err.line, column: err.column }]);
        }
        throw parseError('toml', field, [{ path: field, message: 'not valid TOML' }]);
      }
    }
    case 'env': {
      const flat = dotenv().parse(source);
      return options.unflatten ? unflattenEnv(flat) : flat;
    }
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** KEY__SUB=1 -> {KEY: {SUB: "1"}}. A key that is both a value and a parent keeps the value under "". */
export function unflattenEnv(flat: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split(ENV_SEPARATOR).filter((p) => p !== '');
    if (parts.length === 0) continue;
    let node = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (isPlainObject(next)) node = next;
      else {
        const created: Record<string, unknown> = next === undefined ? {} : { '': next };
        node[part] = created;
        node = created;
      }
    }
    const last = parts[parts.length - 1];
    if (isPlainObject(node[last])) (node[last] as Record<string, unknown>)[''] = value;
    else node[last] = value;
  }
  return out;
}

/** Nested objects and arrays become KEY__SUB / KEY__0 entries. */
export function flattenForEnv(data: unknown): { entries: [string, string][]; issues: ParseIssue[] } {
  const entries: [string, string][] = [];
  const issues: ParseIssue[] = [];
  if (!isPlainObject(data)) {
    return { entries, issues: [{ path: '', message: 'a .env file holds KEY=value pairs; the top level must be an object' }] };
  }
  const walk = (value: unknown, key: string, pointer: string) => {
    if (Array.isArray(value) || isPlainObject(value)) {
      const children = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
      for (const [k, v] of children) walk(v, key === '' ? k : `${key}${ENV_SEPARATOR}${k}`, `${pointer}/${pointerSegment(k)}`);
      return;
    }
    if (!ENV_KEY.test(key)) {
      issues.push({
        path: pointer,
        message: `"${key.slice(0, 100)}" is not a valid .env variable name (letters, digits, _ . -; not starting with a digit)`,
      });
      return;
    }
    entries.push([key, value === null || value === undefined ? '' : String(value)]);
  };
  for (const [k, v] of Object.entries(data)) walk(v, k, `/${pointerSegment(k)}`);
  return { entries, issues };
}

const PLAIN_ENV_VALUE = /^[A-Za-z0-9_./:@+,%=-]*$/;

/**
 * Quotes a value so dotenv reads back exactly the same string: bare when safe, else the first quote
 * character the value does not contain ('...' and `...` are literal; "..." is used only when the value
 * holds no backslash-n/r that dotenv would expand).
 */
export function quoteEnvValue(value: string): string | undefined {
  if (PLAIN_ENV_VALUE.test(value)) return value;
  // dotenv turns CR into LF before parsing, so a CR survives only as an escape inside "...".
  if (value.includes('\r')) {
    return value.includes('"') || /\\[nr]/.test(value) ? undefined : `"${value.replace(/\r/g, '\\r').replace(/\n/g, '\\n')}"`;
  }
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('`')) return `\`${value}\``;
  if (!value.includes('"') && !/\\[nr]/.test(value)) return `"${value}"`;
  return undefined;
}

function findNulls(value: unknown, pointer: string, out: string[]): void {
  if (out.length >= MAX_ISSUES) return;
  if (value === null || value === undefined) out.push(pointer || '/');
  else if (Array.isArray(value)) value.forEach((v, i) => findNulls(v, `${pointer}/${i}`, out));
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) findNulls(v, `${pointer}/${pointerSegment(k)}`, out);
}

function cannotConvert(to: ConfigFormat, issues: ParseIssue[]): AppError {
  return new AppError(
    'VALIDATION_ERROR',
    `The data cannot be written as ${to.toUpperCase()}: ${issues[0]?.path || '(root)'}: ${issues[0]?.message}. See details for every problem.`,
    { details: issues.slice(0, MAX_ISSUES) },
  );
}

/** Serialize JSON-compatible data. Data the target cannot represent is refused, never dropped silently. */
export function serializeConfig(data: unknown, to: ConfigFormat, indent = 2): string {
  switch (to) {
    case 'json':
      return `${JSON.stringify(data, null, indent)}\n`;
    case 'yaml':
      return yaml().stringify(data, { indent: Math.max(indent, 1) });
    case 'toml': {
      if (!isPlainObject(data))
        throw cannotConvert('toml', [{ path: '', message: 'TOML documents are tables; the top level must be an object' }]);
      const nulls: string[] = [];
      findNulls(data, '', nulls);
      if (nulls.length > 0) {
        throw cannotConvert(
          'toml',
          nulls.map((p) => ({ path: p, message: 'TOML has no null; remove the key or give it a value' })),
        );
      }
      return `${toml().stringify(data)}\n`;
    }
    case 'env': {
      const { entries, issues } = flattenForEnv(data);
      const lines: string[] = [];
      for (const [key, value] of entries) {
        const quoted = quoteEnvValue(value);
        if (quoted === undefined) {
          issues.push({ path: key, message: 'the value contains every quote character (\' " `) and cannot be quoted for .env' });
        } else {
          lines.push(`${key}=${quoted}`);
        }
      }
      if (issues.length > 0) throw cannotConvert('env', issues);
      return lines.length ? `${lines.join('\n')}\n` : '';
    }
  }
}
