import request from 'supertest';
import type { WrapperFixture } from './fixtures';

/** What the wrapper does on any engine; run against the SQLite sandbox and PostgreSQL. */
export function wrapperBehaviour(makeFixture: () => Promise<WrapperFixture>): void {
  let f: WrapperFixture;
  const call = (tool: string, args: Record<string, unknown>) => request(f.app.app).post(`/tools/${tool}`).send(args);
  const query = (args: Record<string, unknown>) => call('query', args);

  beforeEach(async () => {
    f = await makeFixture();
  });
  afterEach(async () => {
    await f.cleanup();
  });

  it('selects columns with filters, order, limit and offset, reporting column types', async () => {
    const res = await query({
      table: 'people',
      columns: ['id', 'name'],
      filters: [{ column: 'age', op: 'lte', value: 40 }],
      order: [{ column: 'name', direction: 'desc' }],
    }).expect(200);
    expect(res.body.result).toMatchObject({
      table: { name: 'people', type: 'table' },
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'text' },
      ],
      rows: [
        { id: 4, name: 'dee' },
        { id: 2, name: 'bob' },
        { id: 1, name: 'ada' },
      ],
      rowCount: 3,
      truncated: false,
    });
    const page = await query({ table: 'people', columns: ['id'], limit: 2, offset: 1 }).expect(200);
    expect(page.body.result).toMatchObject({ rows: [{ id: 2 }, { id: 3 }], truncated: true, nextOffset: 3 });
    const last = await query({ table: 'people', columns: ['id'], limit: 2, offset: 4 }).expect(200);
    expect(last.body.result).toMatchObject({ rows: [{ id: 5 }], truncated: false });
    expect(last.body.result.nextOffset).toBeUndefined();
  });

  it('supports every filter operator with bound values', async () => {
    const ids = async (filters: unknown[]) =>
      (await query({ table: 'people', columns: ['id'], filters }).expect(200)).body.result.rows.map((r: { id: number }) => r.id);
    expect(await ids([{ column: 'age', op: 'eq', value: 25 }])).toEqual([2, 4]);
    expect(await ids([{ column: 'age', op: 'ne', value: 25 }])).toEqual([1, 3]);
    expect(await ids([{ column: 'age', op: 'lt', value: 36 }])).toEqual([2, 4]);
    expect(await ids([{ column: 'age', op: 'gt', value: 36 }])).toEqual([3]);
    expect(await ids([{ column: 'age', op: 'gte', value: 36 }])).toEqual([1, 3]);
    expect(await ids([{ column: 'email', op: 'like', value: '%.org' }])).toEqual([1, 3]);
    expect(await ids([{ column: 'name', op: 'ilike', value: 'cy%' }])).toEqual([3]);
    expect(await ids([{ column: 'id', op: 'in', value: [5, 1, 99] }])).toEqual([1, 5]);
    expect(await ids([{ column: 'email', op: 'is_null' }])).toEqual([2, 5]);
    expect(
      await ids([
        { column: 'email', op: 'not_null' },
        { column: 'age', op: 'lt', value: 40 },
      ]),
    ).toEqual([1, 4]);
  });

  it('treats hostile filter values as data', async () => {
    for (const value of ['1 OR 1=1', "' OR '1'='1", "ada'; DROP TABLE x; --", '"a"--']) {
      const res = await query({ table: 'people', filters: [{ column: 'name', op: 'eq', value }] }).expect(200);
      expect(res.body.result.rows).toEqual([]);
    }
    const inList = await query({ table: 'people', filters: [{ column: 'name', op: 'in', value: ["x') OR 1=1 --", 'ada'] }] }).expect(200);
    expect(inList.body.result.rowCount).toBe(1);
    expect(await f.count('x')).toBe(2);
    expect(await f.count('people')).toBe(5);
  });

  it('checks table and column names against the live schema', async () => {
    for (const table of ['people; DROP TABLE x', '"people"--', 'people WHERE 1=1', 'x" ; DELETE FROM "x']) {
      expect((await query({ table }).expect(404)).body.code).toBe('NOT_FOUND');
    }
    for (const args of [
      { columns: ['"a"--'] },
      { columns: ['id, (SELECT 1)'] },
      { filters: [{ column: '1 OR 1=1', op: 'eq', value: 1 }] },
      { order: [{ column: 'id; DROP TABLE x', direction: 'asc' }] },
    ]) {
      const res = await query({ table: 'people', ...args }).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(res.body.error).toMatch(/is not a column of people/);
    }
    expect(await f.count('x')).toBe(2);
    // Legitimate names that need quoting work.
    const odd = await query({ table: 'odd "name', columns: ['sel"ect', '; drop'] }).expect(200);
    expect(odd.body.result.rows).toEqual([{ 'sel"ect': 7, '; drop': 'seven' }]);
  });

  it('refuses malformed filters with VALIDATION_ERROR', async () => {
    const bad = [
      { column: 'email', op: 'eq', value: null },
      { column: 'email', op: 'eq' },
      { column: 'id', op: 'in', value: [] },
      { column: 'id', op: 'in', value: 3 },
      { column: 'email', op: 'is_null', value: 'x' },
      { column: 'name', op: 'like', value: 5 },
      { column: 'id', op: 'gt', value: [1, 2] },
      { column: 'id', op: 'between', value: 1 },
      { column: 'id', op: 'eq', value: { $gt: 1 } },
      { column: 'id', op: 'eq', value: 1, extra: true },
    ];
    for (const filter of bad) {
      expect((await query({ table: 'people', filters: [filter] }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    }
    await query({ table: 'people', limit: 501 }).expect(400);
    await query({ table: 'people', offset: -1 }).expect(400);
    await query({ table: 'people', sql: 'SELECT 1' }).expect(400);
  });

  it('caps large tables at the limit and says truncated', async () => {
    const res = await query({ table: 'big', limit: 500 }).expect(200);
    expect(res.body.result).toMatchObject({ rowCount: 500, truncated: true, nextOffset: 500 });
    expect(res.body.result.rows[499]).toEqual({ n: 500 });
    const tail = await query({ table: 'big', offset: 1150, limit: 500 }).expect(200);
    expect(tail.body.result).toMatchObject({ rowCount: 50, truncated: false });
  });

  it('lists and describes the schema', async () => {
    const list = await call('schema', { action: 'list', limit: 500 }).expect(200);
    const names = list.body.result.tables.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['people', 'x', 'big', 'odd "name']));
    const described = await call('schema', { action: 'describe', table: 'people' }).expect(200);
    expect(described.body.result.table).toMatchObject({ name: 'people', primaryKey: ['id'] });
    expect(described.body.result.table.columns.map((c: { name: string; nullable: boolean }) => [c.name, c.nullable])).toEqual([
      ['id', expect.any(Boolean)],
      ['name', false],
      ['email', true],
      ['age', true],
    ]);
    await call('schema', { action: 'describe', table: 'nope' }).expect(404);
    await call('schema', { action: 'describe' }).expect(400);
    await call('schema', { action: 'drop' }).expect(400);
  });

  it('reports connection status, statistics and a test query', async () => {
    const status = await call('connection', { action: 'status' }).expect(200);
    expect(status.body.result).toMatchObject({ engine: f.engine, readOnly: true, connected: true });
    expect(status.body.result.version).toMatch(f.engine === 'postgres' ? /^PostgreSQL \d+/ : /^SQLite 3\./);
    const test = await call('connection', { action: 'test' }).expect(200);
    expect(test.body.result).toMatchObject({ ok: true, latencyMs: expect.any(Number) });
    await query({ table: 'people' }).expect(200);
    const stats = await call('connection', { action: 'stats' }).expect(200);
    expect(stats.body.result.stats.queries).toBeGreaterThanOrEqual(2);
    if (f.engine === 'postgres') {
      expect(stats.body.result.stats.pool).toMatchObject({ total: expect.any(Number), idle: expect.any(Number), waiting: 0, max: 5 });
    } else {
      expect(stats.body.result.stats.file.sizeBytes).toBeGreaterThan(0);
    }
    const health = await request(f.app.app).get('/health').expect(200);
    expect(health.body.status).toBe('healthy');
  });
}
