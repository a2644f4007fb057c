import path from 'node:path';
import { tempDir } from '../src/test-support';
import { SqliteDb } from '../src/sqlite';

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
    const slowTx = db.transaction(async () => {
      await db.run('INSERT INTO t (v) VALUES (?)', ['a']);
      await new Promise((r) => setTimeout(r, 50));
      throw new Error('roll back');
    });
    const outside = db.run('INSERT INTO t (v) VALUES (?)', ['outside']);
    const second = db.transaction(async () => db.run('INSERT INTO t (v) VALUES (?)', ['b']));
    await expect(slowTx).rejects.toThrow('roll back');
    await outside;
    await second;
    const rows = await db.all<{ v: string }>('SELECT v FROM t ORDER BY id');
    expect(rows.map((r) => r.v).sort()).toEqual(['b', 'outside']);
  });

  it('treats a nested transaction as part of the outer one', async () => {
    await db.transaction(async () => {
      await db.transaction(async () => db.run('INSERT INTO t (v) VALUES (?)', ['nested']));
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
      db.transaction(async () => {
        await db.batch([{ sql: 'INSERT INTO t (v) VALUES (?)', params: ['in-tx'] }]);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await db.get('SELECT v FROM t WHERE v = ?', ['in-tx'])).toBeUndefined();
  });
});
