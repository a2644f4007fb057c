import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { tempDir } from '../src/test-support';
import { SqliteDb, type SqliteTx } from '../src/sqlite';

describe('SqliteDb', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: SqliteDb;
  beforeAll(async () => {
    tmp = tempDir();
    db = await SqliteDb.open(path.join(tmp.dir, 'nested', 't.sqlite'));
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  });
  afterAll(async () => {
    await db.close();
    tmp.cleanup();
  });

  it('keeps concurrent transactions and plain statements apart', async () => {
    const slowTx = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (v) VALUES (?)', ['a']);
      await new Promise((r) => setTimeout(r, 50));
      throw new Error('roll back');
    });
    const outside = db.run('INSERT INTO t (v) VALUES (?)', ['outside']);
    const second = db.transaction(async (tx) => tx.run('INSERT INTO t (v) VALUES (?)', ['b']));
    await expect(slowTx).rejects.toThrow('roll back');
    await outside;
    await second;
    const rows = await db.all<{ v: string }>('SELECT v FROM t ORDER BY id');
    expect(rows.map((r) => r.v).sort()).toEqual(['b', 'outside']);
  });

  it("treats a nested transaction (the handle's) as part of the outer one", async () => {
    await db.transaction(async (tx) => {
      await tx.transaction(async (inner) => {
        expect(inner).toBe(tx);
        return inner.run('INSERT INTO t (v) VALUES (?)', ['nested']);
      });
    });
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['nested'])).toEqual({ v: 'nested' });
  });

  it('runs a batch all or nothing, apart from concurrent statements, and inside a transaction as part of it', async () => {
    const bad = db.batch([
      { sql: 'INSERT INTO t (v) VALUES (?)', params: ['batch-1'] },
      { sql: 'INSERT INTO nowhere (v) VALUES (?)', params: ['x'] },
    ]);
    const outside = db.run('INSERT INTO t (v) VALUES (?)', ['beside-batch']);
    await expect(bad).rejects.toThrow(/no such table/);
    await outside;
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['batch-1'])).toBeUndefined();
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['beside-batch'])).toEqual({ v: 'beside-batch' });
    await db.batch([
      { sql: 'INSERT INTO t (v) VALUES (?)', params: ['batch-2'] },
      { sql: 'UPDATE t SET v = ? WHERE v = ?', params: ['batch-2b', 'batch-2'] },
    ]);
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['batch-2b'])).toEqual({ v: 'batch-2b' });
    await expect(
      db.transaction(async (tx) => {
        await tx.batch([{ sql: 'INSERT INTO t (v) VALUES (?)', params: ['in-tx'] }]);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['in-tx'])).toBeUndefined();
  });

  it("runs the handle's statements inside the transaction: they see each other, and a thrown error rolls them all back", async () => {
    const failure = new Error('undo the handle');
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t (v) VALUES (?)', ['tx-run']);
        await tx.exec("INSERT INTO t (v) VALUES ('tx-exec')");
        expect(await tx.get('SELECT v FROM t WHERE v = ?', ['tx-run'])).toEqual({ v: 'tx-run' });
        expect((await tx.all<{ v: string }>("SELECT v FROM t WHERE v LIKE 'tx-%' ORDER BY v")).map((r) => r.v)).toEqual([
          'tx-exec',
          'tx-run',
        ]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await db.all("SELECT v FROM t WHERE v LIKE 'tx-%'")).toEqual([]);
    const committed = await db.transaction(async (tx) => (await tx.run('INSERT INTO t (v) VALUES (?)', ['tx-kept'])).changes);
    expect(committed).toBe(1);
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['tx-kept'])).toEqual({ v: 'tx-kept' });
  });

  it("makes another caller's statement, issued while a transaction is open, wait and run after its COMMIT", async () => {
    const events: string[] = [];
    let hold!: () => void;
    const held = new Promise<void>((r) => (hold = r));
    let inside!: () => void;
    const opened = new Promise<void>((r) => (inside = r));
    const tx = db.transaction(async (h) => {
      await h.run('INSERT INTO t (v) VALUES (?)', ['wait-1']);
      inside();
      await held;
      await h.run('INSERT INTO t (v) VALUES (?)', ['wait-2']);
      events.push('transaction done');
    });
    await opened;
    const outside = db.all<{ v: string }>("SELECT v FROM t WHERE v LIKE 'wait-%' ORDER BY v").then((rows) => {
      events.push('outside ran');
      return rows.map((r) => r.v);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual([]); // the outside statement is still waiting
    hold();
    await tx;
    // it ran after the COMMIT: it sees both rows, including the one written after it was issued
    expect(await outside).toEqual(['wait-1', 'wait-2']);
    expect(events).toEqual(['transaction done', 'outside ran']);
  });

  it('rejects a handle used after its transaction ended', async () => {
    let kept!: SqliteTx;
    await db.transaction(async (tx) => {
      kept = tx;
    });
    await expect(kept.run('INSERT INTO t (v) VALUES (?)', ['late'])).rejects.toThrow('used after its transaction ended');
    await expect(kept.transaction(async () => undefined)).rejects.toThrow('used after its transaction ended');
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['late'])).toBeUndefined();
  });
});

it('a process that ran a transaction, a batch and plain statements has no promise hooks on (AsyncLocalStorage, the control, turns them on)', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', 'sqlite-promise-hooks.ts')], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const { rows, afterSqlite, afterAsyncLocalStorage } = JSON.parse(out.trim().split('\n').pop()!) as {
    rows: number;
    afterSqlite: number[];
    afterAsyncLocalStorage: number[];
  };
  expect(rows).toBe(3);
  // untracked: both promise callbacks run under the same (ambient) id
  expect(afterSqlite[0]).toBe(afterSqlite[1]);
  // tracked: each promise has an id of its own, so the probe does tell the two apart
  expect(afterAsyncLocalStorage[0]).not.toBe(afterAsyncLocalStorage[1]);
});
