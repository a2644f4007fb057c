import { AppError, type ErrorCode } from '@mcp-fleet/kit';
import { findToken, tokenize } from './sqlite-text';
import { scrub } from './redact';

export interface SqlErrorDetails {
  engine: 'postgres' | 'sqlite';
  /** PostgreSQL SQLSTATE or SQLite result code name. */
  sqlState?: string;
  /** 1-based character position in the statement text, when the engine names one. */
  position?: number;
  line?: number;
  column?: number;
  detail?: string;
  hint?: string;
  /** SQLite positions are found from the "near" token of the message, so they are best effort. */
  positionApproximate?: boolean;
}

/** 1-based line and column of a 1-based character position. */
export function lineColumn(sql: string, position: number): { line: number; column: number } {
  const before = sql.slice(0, Math.max(0, position - 1));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

interface PgLikeError {
  code?: string;
  message?: string;
  position?: string;
  detail?: string;
  hint?: string;
  severity?: string;
}

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE']);

function pgCode(sqlState: string): ErrorCode {
  if (sqlState === '25006' || sqlState === '42501') return 'FORBIDDEN';
  if (sqlState === '57014') return 'TIMEOUT';
  if (sqlState === '23505' || sqlState === '23503' || sqlState === '40001' || sqlState === '40P01' || sqlState === '55P03') {
    return 'CONFLICT';
  }
  const cls = sqlState.slice(0, 2);
  if (['08', '53', '57', '28'].includes(cls) || sqlState === '3D000') return 'UPSTREAM_UNAVAILABLE';
  if (['58', 'XX', 'F0'].includes(cls)) return 'UPSTREAM_ERROR';
  // Syntax, undefined objects, data exceptions, constraint and cardinality errors, PL/pgSQL raises...
  return 'VALIDATION_ERROR';
}

const PG_ADVICE: Partial<Record<ErrorCode, string>> = {
  FORBIDDEN: ' This connection is read-only (or the role lacks the privilege); writes need a connection configured writable.',
  TIMEOUT: ' The statement ran past its time limit; narrow it (WHERE, LIMIT) or raise the statement timeout.',
  CONFLICT: ' The statement conflicts with existing data or a concurrent transaction.',
  VALIDATION_ERROR: ' Fix the SQL and try again.',
  UPSTREAM_UNAVAILABLE: ' The database is unreachable or refused the connection; try again later or check its configuration.',
};

/** Map a pg error (or a connection failure) to an AppError; the engine's message and position go in details. */
export function mapPgError(err: unknown, sql: string | undefined, secrets: (string | undefined)[] = []): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as PgLikeError & { errno?: number; syscall?: string };
  const message = scrub(String(e.message ?? err), secrets);
  if (typeof e.code === 'string' && CONNECT_ERRORS.has(e.code)) {
    return new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The PostgreSQL server cannot be reached (${e.code}); check that it runs and the URL is right.`,
      {
        cause: err,
        details: { engine: 'postgres', sqlState: e.code },
      },
    );
  }
  if (/timeout exceeded when trying to connect|Connection terminated/i.test(message)) {
    return new AppError('UPSTREAM_UNAVAILABLE', `The PostgreSQL connection failed (${message}); try again later.`, {
      cause: err,
      details: { engine: 'postgres' },
    });
  }
  if (typeof e.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) {
    return new AppError('UPSTREAM_ERROR', `PostgreSQL failed: ${message}`, { cause: err, details: { engine: 'postgres' } });
  }
  let code = pgCode(e.code);
  let text = message;
  if (e.code === '42601' && /cannot insert multiple commands into a prepared statement/i.test(message)) {
    text = 'Only one SQL statement per call is accepted; send the statements one at a time.';
  }
  if (e.code === '25P02') code = 'CONFLICT';
  const details: SqlErrorDetails = { engine: 'postgres', sqlState: e.code };
  const position = e.position ? Number(e.position) : undefined;
  if (position && Number.isFinite(position) && sql !== undefined) {
    details.position = position;
    Object.assign(details, lineColumn(sql, position));
  }
  if (e.detail) details.detail = scrub(e.detail, secrets);
  if (e.hint) details.hint = e.hint;
  const where = details.line ? ` (line ${details.line}, column ${details.column})` : '';
  return new AppError(code, `${text}${where}.${PG_ADVICE[code] ?? ''}`.replace(/\.\./g, '.'), { cause: err, details });
}

interface SqliteLikeError {
  code?: string;
  errno?: number;
  message?: string;
}

/** Map a node-sqlite3 error to an AppError, with a best-effort position from the "near" token. */
export function mapSqliteError(err: unknown, sql: string | undefined): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as SqliteLikeError;
  const raw = String(e.message ?? err);
  const message = raw.replace(/^SQLITE_[A-Z_]+: /, '');
  const sqlState = typeof e.code === 'string' ? e.code : 'SQLITE_ERROR';
  const details: SqlErrorDetails = { engine: 'sqlite', sqlState };
  let code: ErrorCode;
  switch (sqlState) {
    case 'SQLITE_READONLY':
    case 'SQLITE_AUTH':
    case 'SQLITE_PERM':
      code = 'FORBIDDEN';
      break;
    case 'SQLITE_INTERRUPT':
      code = 'TIMEOUT';
      break;
    case 'SQLITE_CONSTRAINT':
      code = /UNIQUE|PRIMARY KEY|FOREIGN KEY/i.test(message) ? 'CONFLICT' : 'VALIDATION_ERROR';
      break;
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      code = 'UPSTREAM_UNAVAILABLE';
      break;
    case 'SQLITE_ERROR':
    case 'SQLITE_RANGE':
    case 'SQLITE_MISMATCH':
    case 'SQLITE_TOOBIG':
      code = 'VALIDATION_ERROR';
      break;
    default:
      code = 'UPSTREAM_ERROR';
  }
  if (sql !== undefined) {
    const near = /near "((?:[^"]|"")*)": syntax error/.exec(message);
    if (near) {
      const tokens = tokenize(sql);
      const offset = findToken(tokens, near[1]) ?? (sql.indexOf(near[1]) >= 0 ? sql.indexOf(near[1]) : undefined);
      if (offset !== undefined) {
        details.position = offset + 1;
        Object.assign(details, lineColumn(sql, offset + 1), { positionApproximate: true });
      }
    } else if (/incomplete input/.test(message)) {
      details.position = sql.length + 1;
      Object.assign(details, lineColumn(sql, sql.length + 1), { positionApproximate: true });
    }
  }
  const advice: Partial<Record<ErrorCode, string>> = {
    FORBIDDEN: ' This connection is read-only; writes need a writable connection.',
    TIMEOUT: ' The statement ran past its time limit; narrow it or raise the statement timeout.',
    UPSTREAM_UNAVAILABLE: ' The database is busy; try again shortly.',
    VALIDATION_ERROR: ' Fix the SQL and try again.',
    CONFLICT: ' The statement conflicts with existing data.',
  };
  const where = details.line ? ` (line ${details.line}, column ${details.column})` : '';
  return new AppError(code, `${message}${where}.${advice[code] ?? ''}`.replace(/\.\./g, '.'), {
    cause: err,
    details,
    ...(code === 'UPSTREAM_UNAVAILABLE' ? { retryAfter: 1 } : {}),
  });
}
