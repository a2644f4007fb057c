import path from 'node:path';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ConnectionLimits } from './limits';
import { describeProblems, READ_ONLY_ROLE_SQL } from './pg-role';
import { PgConnection } from './postgres';
import { SqliteConnection } from './sqlite';
import type { SqlConnection } from './types';

export const CONNECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

/** One named connection as configured: a PostgreSQL URL or a SQLite file. */
export const connectionSpecSchema = z
  .object({
    url: z.string().min(1).optional(),
    file: z.string().min(1).optional(),
    writable: z.boolean().default(false),
    maxRows: z.number().int().min(1).max(10_000).optional(),
    statementTimeoutMs: z.number().int().min(10).max(300_000).optional(),
    poolMax: z.number().int().min(1).max(100).optional(),
  })
  .strict();

export type ConnectionSpecInput = z.input<typeof connectionSpecSchema>;

export interface ConnectionSpec {
  name: string;
  engine: 'postgres' | 'sqlite';
  /** PostgreSQL URL (holds the password: never log it, use redactUrl). */
  url?: string;
  /** SQLite file (absolute). */
  file?: string;
  writable: boolean;
  maxRows?: number;
  statementTimeoutMs?: number;
  poolMax?: number;
}

/** Validate one spec; messages never repeat the URL (it may hold a password). */
export function toConnectionSpec(name: string, input: ConnectionSpecInput): ConnectionSpec {
  if (!CONNECTION_NAME.test(name)) {
    throw new Error(
      `connection name "${name.slice(0, 64)}" must start with a letter and hold only letters, digits, "_" or "-" (at most 63)`,
    );
  }
  const spec = connectionSpecSchema.parse(input);
  const { url, file, ...rest } = spec;
  if (file !== undefined && url === undefined) {
    return { name, engine: 'sqlite', file: path.resolve(file), ...rest };
  }
  if (url === undefined || file !== undefined) throw new Error(`connection "${name}" needs exactly one of "url" or "file"`);
  if (/^sqlite:/i.test(url)) {
    const f = url.replace(/^sqlite:(\/\/)?/i, '');
    if (!f) throw new Error(`connection "${name}": a sqlite: URL needs a file path`);
    return { name, engine: 'sqlite', file: path.resolve(f), ...rest };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`connection "${name}": the url is not a valid URL (expected postgres://user:password@host:5432/db)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`connection "${name}": unsupported URL scheme "${parsed.protocol}" (use postgres:// or sqlite:)`);
  }
  return { name, engine: 'postgres', url, ...rest };
}

/**
 * Parse a `DATABASES` value: JSON (`{"name": {"url": "...", "writable": false}}`) or the simple
 * form `name=url;name2=url2` (read-only connections). Errors never echo a URL.
 */
export function parseDatabases(text: string | undefined): ConnectionSpec[] {
  if (text === undefined || text.trim() === '') return [];
  const trimmed = text.trim();
  const specs: ConnectionSpec[] = [];
  if (trimmed.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      throw new Error('not valid JSON (expected {"name": {"url": "postgres://...", "writable": false}})');
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('must be a JSON object of name -> {url|file, writable}');
    for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
      const input = typeof value === 'string' ? { url: value } : value;
      const parsed = connectionSpecSchema.safeParse(input);
      if (!parsed.success) {
        throw new Error(
          `connection "${name.slice(0, 64)}": ${parsed.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}`,
        );
      }
      specs.push(toConnectionSpec(name, parsed.data));
    }
  } else {
    for (const part of trimmed
      .split(/[;\n]/)
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = part.indexOf('=');
      if (eq <= 0) throw new Error('the simple form is name=url;name2=url2');
      specs.push(toConnectionSpec(part.slice(0, eq).trim(), { url: part.slice(eq + 1).trim() }));
    }
  }
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw new Error(`connection "${s.name}" is named twice`);
    seen.add(s.name);
  }
  return specs;
}

export interface OpenOptions {
  logger?: Logger;
  limits?: Partial<ConnectionLimits>;
  /** Read-only SQLite: create an empty file when missing. */
  createIfMissing?: boolean;
  applicationName?: string;
  /**
   * Serve read-only PostgreSQL connections over a privileged role anyway (see PgConnectionOptions);
   * `optOutVariable` names the setting that did it, for the warning logged at open.
   */
  allowPrivilegedRole?: boolean;
  optOutVariable?: string;
}

/**
 * Log, once at open, what the role of a PostgreSQL connection means for it: a read-only one over a
 * privileged role is refused (every call answers NOT_CONFIGURED) unless the opt-out is set, which is
 * then logged as a warning; a writable one gives callers every power of its role. An unreachable
 * server is left to the health check; each pooled client is checked again before its first use.
 */
function reportRole(conn: PgConnection, spec: ConnectionSpec, options: OpenOptions): void {
  const { logger } = options;
  if (!logger) return;
  const optOut = options.optOutVariable ?? 'the privileged-role opt-out';
  if (!spec.writable && options.allowPrivilegedRole) {
    logger.warn(`UNSAFE: ${optOut} is set; read-only connection "${spec.name}" is served whatever its role may do`, {
      database: spec.name,
    });
  }
  conn.inspectRole().then(
    (report) => {
      if (report.problems.length === 0) return;
      const fields = { database: spec.name, role: report.role, problems: report.problems };
      const what = describeProblems(report.problems);
      if (spec.writable) {
        logger.warn(`writable connection "${spec.name}" runs as role "${report.role}" (${what}): callers get all of it`, fields);
      } else if (!options.allowPrivilegedRole) {
        logger.error(
          `read-only connection "${spec.name}" is refused: its role "${report.role}" can act beyond reading (${what}). ` +
            `Connect it as a login role without those powers (${READ_ONLY_ROLE_SQL}), or set ${optOut}=1 to serve it anyway (unsafe).`,
          fields,
        );
      }
    },
    () => undefined,
  );
}

export async function openConnection(spec: ConnectionSpec, options: OpenOptions = {}): Promise<SqlConnection> {
  const limits = {
    ...options.limits,
    ...(spec.maxRows !== undefined ? { maxRows: Math.min(spec.maxRows, options.limits?.maxRowsCeiling ?? spec.maxRows) } : {}),
    ...(spec.statementTimeoutMs !== undefined ? { statementTimeoutMs: spec.statementTimeoutMs } : {}),
  };
  if (spec.engine === 'postgres') {
    const conn = new PgConnection({
      name: spec.name,
      url: spec.url!,
      writable: spec.writable,
      allowPrivilegedRole: options.allowPrivilegedRole,
      max: spec.poolMax,
      logger: options.logger,
      applicationName: options.applicationName,
      ...limits,
    });
    reportRole(conn, spec, options);
    return conn;
  }
  return SqliteConnection.open({
    name: spec.name,
    file: spec.file!,
    writable: spec.writable,
    createIfMissing: options.createIfMissing,
    ...limits,
  });
}

/** The named connections of a service. */
export class ConnectionRegistry {
  private constructor(private readonly connections: Map<string, SqlConnection>) {}

  static async open(specs: ConnectionSpec[], options: OpenOptions = {}): Promise<ConnectionRegistry> {
    const map = new Map<string, SqlConnection>();
    try {
      for (const spec of specs) map.set(spec.name, await openConnection(spec, options));
    } catch (err) {
      await Promise.all([...map.values()].map((c) => c.close()));
      throw err;
    }
    return new ConnectionRegistry(map);
  }

  names(): string[] {
    return [...this.connections.keys()];
  }

  all(): SqlConnection[] {
    return [...this.connections.values()];
  }

  /** NOT_FOUND naming the configured connections when `name` is not one. */
  get(name: string): SqlConnection {
    const c = this.connections.get(name);
    if (!c) {
      throw new AppError('NOT_FOUND', `No database named "${name.slice(0, 64)}"; configured: ${this.names().join(', ')}.`, {
        details: [{ path: 'database', message: 'unknown database' }],
      });
    }
    return c;
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((c) => c.close()));
  }
}
