import path from 'node:path';
import { baseEnvShape, bool, ConfigError, loadConfig, type Env, int } from '@mcp-fleet/kit';
import { parseDatabases, toConnectionSpec, type ConnectionSpec } from '@mcp-fleet/sql';
import { z } from 'zod';

export const SERVICE_ID = 'database-mcp';
export const SANDBOX = 'sandbox';

export const configSchema = z.object({
  ...baseEnvShape,
  DATABASES: z
    .string()
    .optional()
    .meta({ secret: true })
    .describe('Named connections: JSON {"name": {"url"|"file", "writable"}} or `name=url;name2=url2` (read-only).'),
  DATABASE_URL: z.string().optional().meta({ secret: true }).describe('Shortcut: one PostgreSQL connection named `main`.'),
  DATABASE_WRITABLE: bool(false).describe('Make `main` writable (read-only by default).'),
  DB_READONLY_ALLOW_PRIVILEGED_ROLE: bool(false).describe(
    'UNSAFE: serve read-only PostgreSQL connections whose role is a superuser or may reach server files and programs (refused by default; logged).',
  ),
  DB_SANDBOX_FILE: z.string().min(1).optional().describe('The embedded sandbox file; default ${DATA_DIR}/database-mcp/sandbox.sqlite.'),
  DB_MAX_ROWS: int(1000, 1, 10_000).describe('Rows returned at most per statement (callers may ask for fewer).'),
  DB_STATEMENT_TIMEOUT_MS: int(10_000, 100, 300_000).describe('Time limit of one statement on PostgreSQL connections (TIMEOUT after it).'),
  DB_MAX_RESULT_BYTES: int(8_388_608, 1024, 67_108_864).describe('Approximate JSON size of the rows of one answer.'),
  DB_POOL_MAX: int(5, 1, 100).describe('PostgreSQL pool size per connection.'),
});

export type EnvConfig = z.output<typeof configSchema>;

export interface Config extends Omit<EnvConfig, 'DATABASES' | 'DATABASE_URL'> {
  sandboxFile: string;
  /** The sandbox first, then DATABASES, then DATABASE_URL as `main`. */
  connections: ConnectionSpec[];
}

/** Turn the variables into named connection specs; problems name the variable, never a URL. */
export function resolveConnections(c: EnvConfig): Config {
  const problems: { variable: string; message: string }[] = [];
  const sandboxFile = path.resolve(c.DB_SANDBOX_FILE ?? path.join(c.DATA_DIR, 'database-mcp', 'sandbox.sqlite'));
  const connections: ConnectionSpec[] = [{ name: SANDBOX, engine: 'sqlite', file: sandboxFile, writable: true }];
  try {
    connections.push(...parseDatabases(c.DATABASES));
  } catch (err) {
    problems.push({ variable: 'DATABASES', message: (err as Error).message });
  }
  if (c.DATABASE_URL && c.DATABASE_URL.trim() !== '') {
    try {
      connections.push(toConnectionSpec('main', { url: c.DATABASE_URL.trim(), writable: c.DATABASE_WRITABLE }));
    } catch (err) {
      problems.push({ variable: 'DATABASE_URL', message: (err as Error).message });
    }
  }
  const names = connections.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) {
    problems.push({
      variable: 'DATABASES',
      message: `the name "${dup}" is taken (${dup === SANDBOX ? 'by the embedded sandbox' : 'DATABASE_URL is named main'}); pick another`,
    });
  }
  if (problems.length > 0) throw new ConfigError(SERVICE_ID, problems);
  const { DATABASES: _d, DATABASE_URL: _u, ...rest } = c;
  return { ...rest, sandboxFile, connections };
}

export function readConfig(env?: Env): Config {
  return resolveConnections(loadConfig(SERVICE_ID, configSchema, env));
}
