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
});
