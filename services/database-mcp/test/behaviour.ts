import request from 'supertest';
import type { EngineFixture } from './fixtures';

/** The behaviour every engine must show; run once against SQLite and once against PostgreSQL. */
export function databaseBehaviour(makeFixture: () => Promise<EngineFixture>): void {
  let f: EngineFixture;
  const exec = (database: string, query: string, params: unknown[] = [], extra: Record<string, unknown> = {}) =>
    request(f.app.app)
      .post('/db/execute')
      .send({ database, query, params, ...extra });

  const seed = async () => {
    await exec(f.writable, 'CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL)').expect(200);
    for (const [id, name, score] of [
      [1, 'ada', 9.5],
      [2, 'bob', 7],
      [3, 'cy', null],
    ]) {
      await exec(f.writable, `INSERT INTO people (id, name, score) VALUES (${f.p(1)}, ${f.p(2)}, ${f.p(3)})`, [id, name, score]).expect(
        200,
      );
    }
  };

  beforeEach(async () => {
    f = await makeFixture();
    await seed();
  });
  afterEach(async () => {
    await f.cleanup();
  });

  it('writes with bound parameters and reads back rows with column types', async () => {
    const ins = await exec(f.writable, `INSERT INTO people (id, name) VALUES (${f.p(1)}, ${f.p(2)})`, [4, 'dee']).expect(200);
    expect(ins.body.result).toMatchObject({ command: 'INSERT', rowsAffected: 1, truncated: false });
    const res = await exec(f.writable, `SELECT id, name, score FROM people WHERE id >= ${f.p(1)} ORDER BY id`, [2]).expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'database-mcp' });
    expect(res.body.result.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'text' },
      { name: 'score', type: 'real' },
    ]);
    expect(res.body.result.rows).toEqual([
      { id: 2, name: 'bob', score: 7 },
      { id: 3, name: 'cy', score: null },
      { id: 4, name: 'dee', score: null },
    ]);
    expect(res.body.result).toMatchObject({ rowCount: 3, truncated: false, command: 'SELECT' });
    const upd = await exec(f.writable, `UPDATE people SET score = ${f.p(1)} WHERE score IS NULL`, [1]).expect(200);
    expect(upd.body.result.rowsAffected).toBe(2);
    const arr = await exec(f.writable, 'SELECT id, name FROM people ORDER BY id', [], { rowMode: 'array', maxRows: 2 }).expect(200);
    expect(arr.body.result.rows).toEqual([
      [1, 'ada'],
      [2, 'bob'],
    ]);
    expect(arr.body.result.truncated).toBe(true);
  });

  it('lists, describes and samples tables', async () => {
    const tables = await request(f.app.app).get('/db/tables').query({ database: f.writable }).expect(200);
    expect(tables.body.result.tables).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'people', type: 'table' })]));
    const schema = await request(f.app.app).get('/db/schema/people').query({ database: f.writable }).expect(200);
    const t = schema.body.result.table;
    expect(t.primaryKey).toEqual(['id']);
    expect(t.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'name', 'score']);
    expect(t.columns[1]).toMatchObject({ name: 'name', type: 'text', nullable: false, primaryKey: false });
    const sample = await request(f.app.app).get('/db/sample/people').query({ database: f.readonly, limit: 2 }).expect(200);
    expect(sample.body.result.rows.map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect(sample.body.result.truncated).toBe(true);
    await request(f.app.app).get('/db/schema/nobody').query({ database: f.writable }).expect(404);
  });

  it('answers SQL errors with VALIDATION_ERROR, the engine message and the position', async () => {
    const res = await exec(f.writable, 'SELECT *\nFORM people').expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.error).toMatch(/FORM/);
    expect(res.body.details).toMatchObject({ engine: f.engine, position: 10, line: 2, column: 1 });
    const missing = await exec(f.writable, 'SELECT nope FROM people').expect(400);
    expect(missing.body.error).toMatch(/nope/);
  });

  it('refuses several statements in one call and runs none of them', async () => {
    for (const db of [f.writable, f.readonly]) {
      const res = await exec(db, 'SELECT 1; DROP TABLE people').expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.error).toMatch(/one SQL statement/);
    }
    expect(await f.exists('people')).toBe(true);
    expect(await f.count('people')).toBe(3);
  });

  it('refuses INSERT, UPDATE, DELETE and DROP on a read-only connection and changes nothing', async () => {
    for (const sql of [
      `INSERT INTO people (id, name) VALUES (9, 'mallory')`,
      `UPDATE people SET name = 'x'`,
      'DELETE FROM people',
      'DROP TABLE people',
      'CREATE TABLE evil (a INTEGER)',
    ]) {
      const res = await exec(f.readonly, sql).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    expect(await f.count('people')).toBe(3);
    expect(await f.exists('evil')).toBe(false);
    const names = await exec(f.writable, 'SELECT name FROM people ORDER BY id').expect(200);
    expect(names.body.result.rows.map((r: { name: string }) => r.name)).toEqual(['ada', 'bob', 'cy']);
    const read = await exec(f.readonly, 'SELECT count(*) AS n FROM people').expect(200);
    expect(Number(read.body.result.rows[0].n)).toBe(3);
  });

  it('binds hostile values as data and checks hostile table names against the schema', async () => {
    const res = await exec(f.readonly, `SELECT * FROM people WHERE name = ${f.p(1)}`, ["ada' OR 1=1 --"]).expect(200);
    expect(res.body.result.rows).toEqual([]);
    const numeric = await exec(f.readonly, `SELECT * FROM people WHERE name = ${f.p(1)}`, ['1 OR 1=1']).expect(200);
    expect(numeric.body.result.rowCount).toBe(0);
    for (const name of ['people; DROP TABLE people', '"people"--', 'people" WHERE 1=1 --', '1 OR 1=1']) {
      const sample = await request(f.app.app)
        .get(`/db/sample/${encodeURIComponent(name)}`)
        .query({ database: f.writable })
        .expect(404);
      expect(sample.body.code).toBe('NOT_FOUND');
    }
    expect(await f.count('people')).toBe(3);
  });

  it('caps a huge result set and says truncated', async () => {
    const sql = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT x FROM c';
    const res = await exec(f.readonly, sql).expect(200);
    expect(res.body.result.rows).toHaveLength(500);
    expect(res.body.result).toMatchObject({ truncated: true, truncatedReason: 'maxRows', rowCount: 500, maxRows: 500 });
    expect(res.body.result.rows[499]).toEqual({ x: 500 });
    const asked = await exec(f.readonly, sql, [], { maxRows: 5000 }).expect(200);
    expect(asked.body.result.rows).toHaveLength(500);
  });

  it('stops a runaway statement with TIMEOUT and stays usable', async () => {
    const res = await exec(f.readonly, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c').expect(
      504,
    );
    expect(res.body.code).toBe('TIMEOUT');
    const after = await exec(f.readonly, 'SELECT count(*) AS n FROM people').expect(200);
    expect(Number(after.body.result.rows[0].n)).toBe(3);
  });
}
