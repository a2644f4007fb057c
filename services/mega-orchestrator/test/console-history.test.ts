/**
 * The console's list of a caller's sessions (src/console/history.ts) on both stores the history runs
 * on, SQLite and PostgreSQL: an owner sees exactly its own sessions, newest first, even beside an
 * owner whose name ends with its own (" api-key:bob"), and history recorded without authorization is
 * listed only without it. Each call keeps its result (the envelope) as it keeps its arguments: secrets
 * redacted, base64 media kept as a note of its size, cut at RESULT_MAX with a note of the length; a
 * call recorded by a store made before results were kept (no `result` column) still reads, without one.
 */
import path from 'node:path';
import { describeWithBackend, pgScratchSchema, tempDir, testLogger, type PgScratchSchema } from '@mcp-fleet/testing';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { CallHistory, RESULT_MAX, storedText, type CallRecord } from '../src/history/call-history';
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

/** A result with a secret, base64 media, and one too long to keep whole: what the history kept of each. */
async function checkResults(history: CallHistory): Promise<void> {
  const now = Date.now();
  const png = 'iVBORw0KGgo'.repeat(400);
  const base = { sessionId: 'r', owner: BOB, transport: 'native', mode: 'auto', durationMs: 2, args: { q: 1 } } as const;
  history.enqueue({
    ...base,
    tool: 'secret',
    success: true,
    at: now - 3000,
    result: { success: true, result: { user: 'ann', token: 'abc123', note: 'kept' }, service: 'demo' },
  });
  history.enqueue({
    ...base,
    tool: 'image',
    success: true,
    at: now - 2000,
    result: { success: true, result: null, mcp: { content: [{ type: 'image', mimeType: 'image/png', data: png }] } },
  });
  history.enqueue({ ...base, tool: 'long', success: true, at: now - 1000, result: { success: true, result: 'y'.repeat(RESULT_MAX * 2) } });
  history.enqueue({
    ...base,
    tool: 'failed',
    success: false,
    code: 'VALIDATION_ERROR',
    at: now,
    result: { success: false, code: 'VALIDATION_ERROR', error: 'days: at most 14' },
  });
  const view = (await history.read('r', BOB, 10)) as { calls: { tool: string; result?: any }[] };
  const byTool = Object.fromEntries(view.calls.map((c) => [c.tool, c.result]));
  expect(byTool.secret).toEqual({ success: true, result: { user: 'ann', token: '[redacted]', note: 'kept' }, service: 'demo' });
  expect(JSON.stringify(byTool.secret)).not.toContain('abc123');
  expect(byTool.image.mcp.content[0]).toEqual({
    type: 'image',
    mimeType: 'image/png',
    data: `[${png.length} characters of base64 data, not kept]`,
  });
  expect(byTool.long).toMatchObject({ truncated: true, length: RESULT_MAX * 2 + '{"success":true,"result":""}'.length });
  expect(byTool.long.excerpt).toHaveLength(RESULT_MAX);
  expect(byTool.failed).toEqual({ success: false, code: 'VALIDATION_ERROR', error: 'days: at most 14' });
  // another owner reads none of it
  expect(await history.read('r', 'api-key:eve', 10)).toBeUndefined();
}

/** An object `brackets` deep: {"n": {"n": ... [0] ...}}, its innermost an array. */
function nest(brackets: number): Record<string, unknown> {
  let v: unknown = [0];
  for (let i = 1; i < brackets; i++) v = { n: v };
  return v as Record<string, unknown>;
}

/**
 * The same results and arguments with the JSON texts the call path already had (CallRecord.argsText,
 * resultText, as the channel gives them): the history keeps exactly what it keeps from the values,
 * secrets redacted however the text spells them (an escaped name too), media noted, deep nesting cut.
 */
async function checkTexts(history: CallHistory): Promise<void> {
  const now = Date.now();
  const png = 'iVBORw0KGgo'.repeat(400);
  let deep: unknown = 'bottom';
  for (let i = 0; i < 12; i++) deep = { down: deep };
  const cases: { name: string; args: Record<string, unknown>; argsText?: string; result: Record<string, unknown>; resultText?: string }[] =
    [
      { name: 'plain', args: { path: '.' }, result: { success: true, service: 'demo', result: { entries: ['a', 'b'], n: 2 } } },
      { name: 'secret', args: { user: 'ann', api_key: 'k1' }, result: { success: true, result: { note: 'kept', token: 'abc123' } } },
      // "\u0074oken" is "token" once parsed: the text does not show the name, the value does
      {
        name: 'escaped',
        args: { q: 1 },
        result: { success: true, result: { tok: 1, token: 'abc123' } },
        resultText: '{"tok":1,"\\u0074oken":"abc123"}',
      },
      { name: 'password value', args: { q: 'password' }, result: { success: true, result: 'no secret, just the word password' } },
      { name: 'media', args: {}, result: { success: true, result: { content: [{ type: 'image', mimeType: 'image/png', data: png }] } } },
      { name: 'deep', args: { deep }, result: { success: true, result: { deep } } },
      { name: 'long', args: { text: 'x'.repeat(5000) }, result: { success: true, result: 'y'.repeat(RESULT_MAX * 2) } },
      { name: 'bare', args: {}, result: { result: [1, 2] } },
      // exactly as deep as redact() inspects (9 brackets from the top), and one deeper
      { name: 'edge', args: nest(9), result: { success: true, result: nest(8) } },
      { name: 'over', args: nest(10), result: { success: true, result: nest(9) } },
    ];
  const base = { owner: BOB, transport: 'jsonrpc', mode: 'auto', durationMs: 2, success: true } as const;
  cases.forEach((c, i) => {
    const { result: value } = c.result;
    const texts = { argsText: c.argsText ?? JSON.stringify(c.args), resultText: c.resultText ?? JSON.stringify(value) };
    history.enqueue({ ...base, sessionId: 'from-values', tool: c.name, at: now - 100 + i, args: c.args, result: c.result });
    history.enqueue({ ...base, sessionId: 'from-texts', tool: c.name, at: now - 100 + i, args: c.args, result: c.result, ...texts });
  });
  const calls = async (id: string) =>
    ((await history.read(id, BOB, 100)) as { calls: { tool: string; arguments: unknown; result: unknown }[] }).calls.map(
      ({ tool, arguments: args, result }) => ({ tool, args, result }),
    );
  const fromValues = await calls('from-values');
  const fromTexts = await calls('from-texts');
  expect(fromTexts).toEqual(fromValues);
  const byTool = Object.fromEntries(fromTexts.map((c) => [c.tool, c]));
  expect(byTool.plain.result).toEqual(cases[0].result);
  expect(byTool.secret).toMatchObject({
    args: { user: 'ann', api_key: '[redacted]' },
    result: { result: { note: 'kept', token: '[redacted]' } },
  });
  expect(byTool.escaped.result).toEqual({ success: true, result: { tok: 1, token: '[redacted]' } });
  expect(JSON.stringify(fromTexts)).not.toMatch(/abc123|k1/);
  expect(JSON.stringify(byTool.media.result)).not.toContain(png);
  expect(JSON.stringify(byTool.deep)).toContain('[redacted: nested too deeply]');
  expect(JSON.stringify(byTool.edge)).not.toContain('nested too deeply');
  expect(JSON.stringify(byTool.over.args)).toContain('[redacted: nested too deeply]');
  expect(JSON.stringify(byTool.over.result)).toContain('[redacted: nested too deeply]');
  expect(byTool.long.args).toMatchObject({ truncated: true, length: JSON.stringify(cases[6].args).length });
  expect(byTool.long.result).toMatchObject({ truncated: true, length: RESULT_MAX * 2 + '{"success":true,"result":""}'.length });
  // the texts that need no rewriting are kept as they are; the others take the full path
  expect(storedText('{"entries":["a","b"],"n":2}', 100)).toBe('{"entries":["a","b"],"n":2}');
  expect(storedText('"abcdef"', 3)).toBe('{"truncated":true,"excerpt":"\\"ab","length":8}');
  for (const text of ['{"token":"x"}', '{"\\u0074oken":"x"}', JSON.stringify(deep)]) expect(storedText(text, 100)).toBeUndefined();
  expect(storedText('{"data":"QUJD"}', 100)).toBe('{"data":"QUJD"}');
  // brackets and escaped quotes inside strings do not count as nesting, nor hide it
  let tricky: unknown = 'x';
  for (let i = 0; i < 12; i++) tricky = { 'a\\': tricky, b: '}]"\\' };
  expect(storedText(JSON.stringify(tricky), 1000)).toBeUndefined();
  const shallow = JSON.stringify({ 'a\\': { b: '}}}}}}}}}}]"' }, c: ['{{{{{{{{{{[[['] });
  expect(storedText(shallow, 1000)).toBe(shallow);
  expect(storedText('{"data":"QUJD"}', 100, true)).toBeUndefined();
}

/**
 * A busy session's calls that meet in one write: those beyond its newest maxCallsPerSession (100 here)
 * are counted in its totals and never inserted (the write's own trim would delete them); a calm
 * session beside it keeps every call.
 */
async function checkSuperseded(history: CallHistory): Promise<void> {
  const db = (await history.database())!;
  const write = db.batch;
  let inserted = 0;
  db.batch = async (statements) => {
    for (const s of statements) if (/^INSERT INTO calls/.test(s.sql)) inserted += s.params.length / 12;
    return write.call(db, statements);
  };
  try {
    const now = Date.now() - 10_000;
    const written = history.written;
    let busy = 0;
    for (let i = 0; i < 1050; i++) {
      if (i % 21 === 20) history.enqueue({ ...record('calm', BOB, now + i), tool: `c${i}` });
      else history.enqueue({ ...record('busy', BOB, now + i), tool: `b${busy++}`, success: busy % 10 !== 0 });
    }
    expect(busy).toBe(1000);
    const view = (await history.read('busy', BOB, 100)) as {
      totalCalls: number;
      totalErrors: number;
      keptCalls: number;
      calls: { tool: string }[];
    };
    expect(inserted).toBe(150);
    expect(history.written - written).toBe(1050);
    expect(view).toMatchObject({ totalCalls: 1000, totalErrors: 100, keptCalls: 100 });
    expect(view.calls.map((c) => c.tool)).toEqual(Array.from({ length: 100 }, (_, i) => `b${999 - i}`));
    const calm = (await history.read('calm', BOB, 100)) as { totalCalls: number; keptCalls: number };
    expect(calm).toMatchObject({ totalCalls: 50, keptCalls: 50 });
  } finally {
    db.batch = write;
  }
}

/** A calls table as a store made before results were kept has it, with one call in it. */
const OLD_CALLS = `CREATE TABLE calls (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, context_id TEXT, tool TEXT NOT NULL, service TEXT,
  transport TEXT NOT NULL, mode TEXT NOT NULL, success INTEGER NOT NULL, code TEXT, duration_ms REAL NOT NULL, at BIGINT NOT NULL, args TEXT)`;
const OLD_SESSIONS = `CREATE TABLE sessions (session_id TEXT PRIMARY KEY, transport TEXT NOT NULL, created_at BIGINT NOT NULL,
  last_seen BIGINT NOT NULL, calls INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0)`;
const oldRows = (at: number) => [
  `INSERT INTO sessions VALUES ('old ${BOB}', 'native', ${at}, ${at}, 1, 0)`,
  `INSERT INTO calls (id, session_id, tool, transport, mode, success, duration_ms, at, args) VALUES (1, 'old ${BOB}', 'note', 'native', 'auto', 1, 3, ${at}, '{"text":"hi"}')`,
];

async function checkOldCall(history: CallHistory): Promise<void> {
  const view = (await history.read('old', BOB, 10)) as { calls: Record<string, unknown>[] };
  expect(view.calls).toHaveLength(1);
  expect(view.calls[0]).toMatchObject({ tool: 'note', success: true, arguments: { text: 'hi' } });
  expect(view.calls[0]).not.toHaveProperty('result');
  // and the store, now with the column, keeps the next call's result
  history.enqueue({ ...record('old', BOB, Date.now()), result: { success: true, result: 'new' } });
  const after = (await history.read('old', BOB, 10)) as { calls: Record<string, unknown>[] };
  expect(after.calls[0].result).toEqual({ success: true, result: 'new' });
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
  it('keeps each call’s result, redacted and bounded', () => checkResults(history));
  it('keeps the same from the texts the call path had', () => checkTexts(history));
  it('never inserts the calls a write would trim at once', () => checkSuperseded(history));

  it('drops the oldest records past the text it may hold, counted and logged once', async () => {
    const warnings: { message: string; meta: Record<string, unknown> }[] = [];
    const base = testLogger('history');
    const logger = Object.assign(Object.create(base) as typeof base, {
      warn: (message: string, meta: Record<string, unknown>) => (warnings.push({ message, meta }), logger),
    });
    const h = new CallHistory({
      file: path.join(tmp.dir, 'bounded.sqlite'),
      maxCallsPerSession: 100,
      flushMs: 60_000,
      retentionHours: 24,
      logger,
    });
    try {
      await h.whenReady();
      // 9 Mi characters of result text a call: the fourth and fifth go past 32 Mi held
      const text = JSON.stringify('z'.repeat(9 * 1024 * 1024));
      for (let i = 0; i < 5; i++)
        h.enqueue({ ...record('big', BOB, Date.now() + i), tool: `t${i}`, result: { success: true, result: 'z' }, resultText: text });
      expect(h.dropped).toBe(2);
      expect(h.queued).toBe(3);
      expect(warnings).toHaveLength(1);
      expect(warnings[0].message).toMatch(/session records dropped/);
      expect(warnings[0].meta).toMatchObject({ count: 1, dropped: 1 });
      await h.flush();
      const view = (await h.read('big', BOB, 10)) as { calls: { tool: string; result: { truncated: boolean } }[] };
      expect(view.calls.map((c) => c.tool)).toEqual(['t4', 't3', 't2']);
      expect(view.calls[0].result).toMatchObject({ truncated: true, length: text.length + '{"success":true,"result":}'.length });
    } finally {
      await h.close();
    }
  });

  it('writes a steady stream of calls in one batch per flush period, not in a string of small ones', async () => {
    const h = new CallHistory({
      file: path.join(tmp.dir, 'steady.sqlite'),
      maxCallsPerSession: 100,
      flushMs: 150,
      retentionHours: 24,
      logger: testLogger('history'),
    });
    try {
      const db = (await h.database())!;
      // each write takes 20 ms, as a loaded store's may: calls keep coming in meanwhile
      const sizes: number[] = [];
      const write = db.batch.bind(db);
      db.batch = async (statements) => {
        const n = Number(/^INSERT INTO calls/.test(statements[0].sql) ? statements[0].params.length / 12 : 0);
        sizes.push(n);
        await new Promise((r) => setTimeout(r, 20));
        return write(statements);
      };
      const started = Date.now();
      let sent = 0;
      while (Date.now() - started < 900) {
        h.enqueue({ ...record('steady', BOB, Date.now()), tool: `t${sent++}` });
        await new Promise((r) => setTimeout(r, 2));
      }
      await h.flush();
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(sent);
      // 900 ms at 150 ms a batch: about six (a write starting as each timer fires), not one every 20 ms
      expect(sizes.length).toBeLessThanOrEqual(9);
      expect(h.written).toBe(sent);
      const view = (await h.read('steady', BOB, 1)) as { totalCalls: number; calls: { tool: string }[] };
      expect(view.totalCalls).toBe(sent);
      expect(view.calls[0].tool).toBe(`t${sent - 1}`);
    } finally {
      await h.close();
    }
  });

  it('makes a new store with 8 KiB pages, in WAL mode', async () => {
    const db = (await history.database())!;
    expect(await db.get('PRAGMA page_size')).toEqual({ page_size: 8192 });
    expect(await db.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' });
  });

  it('reads calls recorded before results were kept', async () => {
    const file = path.join(tmp.dir, 'old.sqlite');
    const db = await SqliteDb.open(file);
    await db.exec(OLD_SESSIONS);
    await db.exec(OLD_CALLS);
    for (const sql of oldRows(Date.now() - 1000)) await db.exec(sql);
    await db.close();
    const old = new CallHistory({ file, maxCallsPerSession: 100, flushMs: 10, retentionHours: 24, logger: testLogger('history') });
    try {
      await checkOldCall(old);
      // a store made before keeps its pages
      expect(await (await old.database())!.get('PRAGMA page_size')).toEqual({ page_size: 4096 });
    } finally {
      await old.close();
    }
  });
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
  it('keeps each call’s result, redacted and bounded', () => checkResults(history));
  it('keeps the same from the texts the call path had', () => checkTexts(history));
  it('never inserts the calls a write would trim at once', () => checkSuperseded(history));

  it('reads calls recorded before results were kept', async () => {
    const old = await pgScratchSchema('console_history_old');
    for (const sql of [
      OLD_SESSIONS,
      OLD_CALLS.replace('id INTEGER PRIMARY KEY', 'id BIGSERIAL PRIMARY KEY'),
      ...oldRows(Date.now() - 1000),
    ])
      await old.admin.query(sql);
    // the serial's next value past the row made by hand
    await old.admin.query("SELECT setval(pg_get_serial_sequence('calls', 'id'), 1)");
    const h = new CallHistory({
      file: '/nonexistent',
      databaseUrl: old.url,
      maxCallsPerSession: 100,
      flushMs: 10,
      retentionHours: 24,
      logger: testLogger('history'),
    });
    try {
      await checkOldCall(h);
    } finally {
      await h.close();
      await old.drop();
    }
  });
});
