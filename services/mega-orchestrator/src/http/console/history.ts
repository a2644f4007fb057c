/**
 * The caller's recorded sessions, newest first, for the console's history page (GET /debug/contexts/{id}
 * reads one of them). A session is stored under historyKey(id, owner) (ownership.ts, the one place
 * that spells a key): the id alone without authorization, else the id followed by the owner's part.
 * Session ids hold no space, so a key belongs to an owner exactly when it ends with that owner's part
 * and what comes before is an id: the query says so in SQL that SQLite and PostgreSQL both run, and
 * nothing else is listed (not a key whose owner merely ends the same).
 */
import { AppError } from '@mcp-fleet/kit';
import type { CallHistory, SessionRow } from '../../history/call-history';
import { historyKey, type Owner } from '../../auth/ownership';

export interface SessionSummary {
  session_id: string;
  transport: string;
  createdAt: string;
  lastSeen: string;
  calls: number;
  errors: number;
}

const COLUMNS = 'session_id, transport, created_at, last_seen, calls, errors';
/** What historyKey puts between an id and an owner (an id never holds it). */
const SEPARATOR = historyKey('', '');

/** Up to `limit` of this owner's sessions, most recently used first. */
export async function listSessions(history: CallHistory, owner: Owner, limit: number): Promise<SessionSummary[]> {
  const db = await history.database();
  if (!db) throw new AppError('NOT_CONFIGURED', history.failure ?? 'The session store is not available.');
  await history.flush();
  // What every key of this owner ends with: nothing without authorization (then the key is the id alone).
  const suffix = historyKey('', owner);
  let rows: SessionRow[];
  if (suffix === '') {
    rows = await db.all<SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE session_id NOT LIKE ? ORDER BY last_seen DESC LIMIT ?`, [
      `%${SEPARATOR}%`,
      limit,
    ]);
  } else {
    // In characters, as both engines' length() and substr() count them.
    const n = [...suffix].length;
    rows = await db.all<SessionRow>(
      `SELECT ${COLUMNS} FROM sessions
       WHERE length(session_id) > ?
         AND substr(session_id, length(session_id) - ? + 1) = ?
         AND substr(session_id, 1, length(session_id) - ?) NOT LIKE ?
       ORDER BY last_seen DESC LIMIT ?`,
      [n, n, suffix, n, `%${SEPARATOR}%`, limit],
    );
  }
  return rows.map((r) => ({
    session_id: r.session_id.slice(0, r.session_id.length - suffix.length),
    transport: r.transport,
    createdAt: new Date(Number(r.created_at)).toISOString(),
    lastSeen: new Date(Number(r.last_seen)).toISOString(),
    calls: Number(r.calls),
    errors: Number(r.errors),
  }));
}
