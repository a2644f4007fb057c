/**
 * compose's postgres container runs docker/postgres-init once at initdb: the role database-mcp and
 * sql-mcp-wrapper log in as must be one their read-only check accepts (they refuse a superuser,
 * which the image's POSTGRES_USER is). Run here against the real PostgreSQL on 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { inspectPgRole } from '../../packages/sql/src/pg-role';

const SCRIPT = path.join(__dirname, '..', '..', 'docker', 'postgres-init', '10-reader-role.sh');
const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });

beforeAll(async () => {
  await admin.connect();
  await admin.query('DROP ROLE IF EXISTS mcp_reader');
});
afterAll(async () => {
  await admin.query('DROP OWNED BY mcp_reader').catch(() => undefined);
  await admin.query('DROP ROLE IF EXISTS mcp_reader');
  await admin.end();
});

it('creates a login role that can read every table and that the read-only check accepts', async () => {
  await admin.query('CREATE TABLE IF NOT EXISTS compose_init_probe (v int)');
  await admin.query('TRUNCATE compose_init_probe; INSERT INTO compose_init_probe VALUES (42)');
  execFileSync('sh', [SCRIPT], {
    env: { PATH: process.env.PATH, PGHOST: '127.0.0.1', POSTGRES_USER: 'postgres', POSTGRES_DB: 'test', POSTGRES_READER_PASSWORD: 'pw-1' },
    stdio: 'pipe',
  });
  const reader = new Client({ connectionString: 'postgres://mcp_reader:pw-1@127.0.0.1:5432/test' });
  await reader.connect();
  try {
    expect(await inspectPgRole(reader)).toEqual({ role: 'mcp_reader', problems: [] });
    expect((await reader.query('SELECT v FROM compose_init_probe')).rows).toEqual([{ v: 42 }]);
    await expect(reader.query('INSERT INTO compose_init_probe VALUES (1)')).rejects.toThrow(/permission denied/);
  } finally {
    await reader.end();
    await admin.query('DROP TABLE compose_init_probe');
  }
});
