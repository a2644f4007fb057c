/**
 * The caller's recorded sessions, newest first, for the console's history page (GET /debug/contexts/{id}
 * reads one of them). A session is stored under historyKey(id, owner) (ownership.ts): the id alone
 * without authorization, else "<id> <owner>". Session ids hold no space, so a key belongs to an owner
 * exactly when what follows its first space is that owner, whole: the query says so in SQL that
 * SQLite and PostgreSQL both run, and nothing else is listed (not a key whose owner merely ends the same).
 */
import { AppError } from '@mcp-fleet/kit';
import type { CallHistory } from '../../history/call-history';
import type { Owner } from '../../auth/ownership';

export interface SessionSummary {
  session_id: string;
  transport: string;
  createdAt: string;
  lastSeen: string;
  calls: number;
  errors: number;
}

interface SessionRow {
  session_id: string;
  transport: string;
  created_at: number;
  last_seen: number;
  calls: number;
  errors: number;
}

const COLUMNS = 'session_id, transport, created_at, last_seen, calls, errors';

/** Up to `limit` of this owner's sessions, most recently used first. */
export async function listSessions(history: CallHistory, owner: Owner, limit: number): Promise<SessionSummary[]> {
  const db = await history.database();
  if (!db) throw new AppError('NOT_CONFIGURED', history.failure ?? 'The session store is not available.');
  await history.flush();
  let rows: SessionRow[];
  if (owner === null) {
    rows = await db.all<SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE session_id NOT LIKE '% %' ORDER BY last_seen DESC LIMIT ?`, [
      limit,
    ]);
  } else {
    // In characters, as both engines' length() and substr() count them.
    const n = [...owner].length;
    rows = await db.all<SessionRow>(
      `SELECT ${COLUMNS} FROM sessions
       WHERE length(session_id) > ?
         AND substr(session_id, length(session_id) - ? + 1) = ?
         AND substr(session_id, length(session_id) - ?, 1) = ' '
         AND substr(session_id, 1, length(session_id) - ? - 1) NOT LIKE '% %'
       ORDER BY last_seen DESC LIMIT ?`,
      [n + 1, n, owner, n, n, limit],
    );
  }
  return rows.map((r) => ({
    session_id: owner === null ? r.session_id : r.session_id.slice(0, r.session_id.indexOf(' ')),
    transport: r.transport,
    createdAt: new Date(Number(r.created_at)).toISOString(),
    lastSeen: new Date(Number(r.last_seen)).toISOString(),
    calls: Number(r.calls),
    errors: Number(r.errors),
  }));
}
