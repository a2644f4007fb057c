import { AppError } from '@mcp-fleet/kit';
import type pg from 'pg';

/**
 * What a read-only connection's login role may do beyond reading. A READ ONLY transaction stops
 * writes to tables, but not what a privileged role does outside them: `COPY ... TO PROGRAM` runs a
 * shell command, `pg_read_file` / `pg_ls_dir` read the server's files, a superuser can `RESET ROLE`
 * or `SET SESSION AUTHORIZATION` out of any role the service picked. So read-only service needs a
 * login role that holds none of these, directly or through any role it may SET ROLE to.
 */
export interface PgRoleReport {
  /** session_user: the login role of the connection. */
  role: string;
  /** Empty when the role is fit for read-only service. */
  problems: string[];
}

/** Predefined roles that reach the server's files or programs. */
export const SERVER_FILE_ROLES = ['pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program'];

/** Functions that read, list or write server files (core, adminpack, dblink); EXECUTE on any of them is a problem. */
export const SERVER_FILE_FUNCTIONS = [
  'pg_read_file',
  'pg_read_binary_file',
  'pg_ls_dir',
  'pg_stat_file',
  'lo_import',
  'lo_export',
  'pg_file_write',
  'pg_file_rename',
  'pg_file_unlink',
  'pg_file_sync',
  'dblink_connect_u',
];

/**
 * One row per problem of the login role and of every role it is a member of (or administers), the
 * gravest first; a superuser makes every other answer moot, so then only that is reported.
 */
const ROLE_CHECK_SQL = `
WITH me AS (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user),
m AS (
  SELECT r.oid, r.rolname, r.rolsuper, r.rolcreaterole, r.rolbypassrls, r.rolreplication
    FROM pg_catalog.pg_roles r
   WHERE pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER')
      OR pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER WITH ADMIN OPTION')
)
SELECT 0 AS rank, 'superuser' AS problem FROM me WHERE me.rolsuper
UNION ALL
SELECT rank, problem FROM (
  SELECT 1 AS rank, 'may become superuser ' || m.rolname AS problem FROM m WHERE m.rolsuper
  UNION ALL SELECT 2, 'member of ' || m.rolname FROM m WHERE m.rolname = ANY($1::text[])
  UNION ALL SELECT 3, 'CREATEROLE (' || m.rolname || ')' FROM m WHERE m.rolcreaterole
  UNION ALL SELECT 3, 'BYPASSRLS (' || m.rolname || ')' FROM m WHERE m.rolbypassrls
  UNION ALL SELECT 3, 'REPLICATION (' || m.rolname || ')' FROM m WHERE m.rolreplication
  UNION ALL SELECT DISTINCT 4, 'EXECUTE on ' || f.oid::pg_catalog.regprocedure::text
    FROM m, pg_catalog.pg_proc f
   WHERE f.proname = ANY($2::text[]) AND pg_catalog.has_function_privilege(m.oid, f.oid, 'EXECUTE')
) rest
WHERE NOT coalesce((SELECT rolsuper FROM me), false)
ORDER BY 1, 2`;

/** Inspect the login role of `client` (no transaction needed; it only reads the catalog). */
export async function inspectPgRole(client: pg.ClientBase): Promise<PgRoleReport> {
  const who = await client.query<{ role: string }>('SELECT session_user::text AS role');
  const res = await client.query<{ problem: string }>(ROLE_CHECK_SQL, [SERVER_FILE_ROLES, SERVER_FILE_FUNCTIONS]);
  return { role: who.rows[0].role, problems: res.rows.map((r) => r.problem) };
}

/** "superuser" or "member of x, EXECUTE on y, and 3 more". */
export function describeProblems(problems: string[]): string {
  const shown = problems.slice(0, 4).join(', ');
  return problems.length > 4 ? `${shown} and ${problems.length - 4} more` : shown;
}

/** A login role fit for read-only service (docs/services/database-mcp.md shows the same). */
export const READ_ONLY_ROLE_SQL =
  "CREATE ROLE mcp_reader LOGIN PASSWORD '...' NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS; GRANT pg_read_all_data TO mcp_reader;";

/**
 * The answer to a call on a read-only connection whose role is privileged: the operator's
 * configuration is at fault, not the caller, so NOT_CONFIGURED (503) with what to configure.
 */
export function privilegedRoleError(connection: string, report: PgRoleReport): AppError {
  return new AppError(
    'NOT_CONFIGURED',
    `The read-only connection "${connection}" is refused: its PostgreSQL role "${report.role}" can act beyond reading ` +
      `(${describeProblems(report.problems)}), which a READ ONLY transaction does not stop (COPY ... TO PROGRAM, pg_read_file). ` +
      `Ask the operator to point this connection at a login role without those powers, e.g. ${READ_ONLY_ROLE_SQL}`,
    { details: { engine: 'postgres', role: report.role, problems: report.problems } },
  );
}
