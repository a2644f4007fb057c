/**
 * The console's list of a caller's sessions (src/console/history.ts) on both stores the history runs
 * on, SQLite and PostgreSQL: an owner sees exactly its own sessions, newest first, even beside an
 * owner whose name ends with its own (" api-key:bob"), and history recorded without authorization is
 * listed only without it.
 */
import path from 'node:path';
import { describeWithBackend, pgScratchSchema, tempDir, testLogger, type PgScratchSchema } from '@mcp-fleet/testing';
import { CallHistory, type CallRecord } from '../src/history/call-history';
import { listSessions } from '../src/http/console/history';

const BOB = 'api-key:bob';
const EVE = 'api-key:eve api-key:bob';
const ODD = 'oauth:https://issuer.example/\nsub:50%_off';

function record(sessionId: string, owner: string | null, at: number): CallRecord {
  return { sessionId, owner, tool: 'note', transport: 'native', mode: 'auto', success: true, durationMs: 1, at, args: {} };
}

async function checkListing(history: CallHistory): Promise<void> {
  const now = Date.now();
  for (const r of [
    record('s1', BOB, now - 3000),
    record('s2', BOB, now - 1000),
    record('s1', EVE, now - 2000),
    record('free', null, now - 500),
    record('x', ODD, now - 100),
  ])
    history.enqueue(r);
  const ids = async (owner: string | null) => (await listSessions(history, owner, 100)).map((s) => s.session_id);
  expect(await ids(BOB)).toEqual(['s2', 's1']);
  expect(await ids(EVE)).toEqual(['s1']);
  expect(await ids(ODD)).toEqual(['x']);
  expect(await ids('api-key:eve')).toEqual([]);
  expect(await ids('bob')).toEqual([]);
  expect(await ids('%')).toEqual([]);
  expect(await ids(null)).toEqual(['free']);
  const [s2] = await listSessions(history, BOB, 1);
  expect(s2).toMatchObject({ session_id: 's2', transport: 'native', calls: 1, errors: 0 });
  expect(typeof s2.lastSeen).toBe('string');
}

describe('console history listing [sqlite]', () => {
  const tmp = tempDir('mcp-fleet-console-history-');
  const history = new CallHistory({
    file: path.join(tmp.dir, 'contexts.sqlite'),
    maxCallsPerSession: 100,
    flushMs: 10,
    retentionHours: 24,
    logger: testLogger('history'),
  });
  afterAll(async () => {
    await history.close();
    tmp.cleanup();
  });

  it('lists exactly the owner’s sessions', () => checkListing(history));
});

describeWithBackend('postgres', 'console history listing', () => {
  let scratch: PgScratchSchema;
  let history: CallHistory;
  beforeAll(async () => {
    scratch = await pgScratchSchema('console_history');
    history = new CallHistory({
      file: '/nonexistent',
      databaseUrl: scratch.url,
      maxCallsPerSession: 100,
      flushMs: 10,
      retentionHours: 24,
      logger: testLogger('history'),
    });
  });
  afterAll(async () => {
    await history?.close();
    await scratch?.drop();
  });

  it('lists exactly the owner’s sessions', () => checkListing(history));
});
