import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';

export interface PgReaderRole {
  /** The role's name (random, safe). */
  role: string;
  /** `url` with the role as user (and its password), for the code under test. */
  url: string;
  /** Revokes everything granted to the role and drops it (close the connections using it first). */
  drop(): Promise<void>;
}

/**
 * A login role without privileges that may read `schema`, also tables `admin` creates there later:
 * what a read-only connection should run as. It has a password, so it works under trust and password auth.
 */
export async function pgReaderRole(admin: Client, url: string, schema: string, prefix = 'reader'): Promise<PgReaderRole> {
  const role = `${prefix}_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
  await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  await admin.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${role}`);
  const u = new URL(url);
  u.username = role;
  u.password = password;
  return {
    role,
    url: u.toString(),
    drop: async () => {
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
    },
  };
}
