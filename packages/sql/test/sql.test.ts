import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { describeWithBackend, pgReaderRole, pgScratchSchema, tempDir } from '@mcp-fleet/testing';
import {
  buildSelect,
  lineColumn,
  mapPgError,
  mapSqliteError,
  parseDatabases,
  quoteIdent,
  redactUrl,
  scanStatements,
  SchemaCache,
  SqliteConnection,
  PgConnection,
  type TableDescription,
} from '../src';

describe('scanStatements (SQLite statement boundaries)', () => {
  it.each([
    ['SELECT 1', 1, 'SELECT'],
    ['SELECT 1;', 1, 'SELECT'],
    ['  -- lead\n select 1 ;; ', 1, 'SELECT'],
    ["SELECT ';' AS a", 1, 'SELECT'],
    ['SELECT "a;b" FROM [x;y] WHERE `c;` = 1', 1, 'SELECT'],
    ['SELECT 1 /* ; */', 1, 'SELECT'],
    ['SELECT 1; DELETE FROM t', 2, 'SELECT'],
    ['SELECT 1 -- ;\n; DELETE FROM t', 2, 'SELECT'],
    ["SELECT 'it''s'; x", 2, 'SELECT'],
    ['CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO l VALUES (1); UPDATE l SET a = 2; END;', 1, 'CREATE'],
    ['CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT CASE WHEN 1 THEN 2 END; END; SELECT 1', 2, 'CREATE'],
    ['', 0, ''],
    ['-- nothing', 0, ''],
  ])('%j holds %i statement(s)', (sql, count, keyword) => {
    const scan = scanStatements(sql);
    expect(scan.count).toBe(count);
    expect(scan.keyword).toBe(keyword);
  });
});

describe('helpers', () => {
  it('redacts passwords in URLs, also when unparseable', () => {
    expect(redactUrl('postgres://u:p%40ss@h:5432/db?sslmode=require')).toBe('postgres://u:***@h:5432/db?sslmode=require');
    expect(redactUrl('postgres://h/db?password=x')).toBe('postgres://h/db?password=***');
    expect(redactUrl('postgres://u:se cret@[bad/db')).not.toMatch(/se cret/);
  });

  it('quotes identifiers by doubling quotes and refuses empty or NUL names', () => {
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteIdent('users; DROP TABLE x')).toBe('"users; DROP TABLE x"');
    expect(() => quoteIdent('')).toThrow(AppError);
    expect(() => quoteIdent('a\0b')).toThrow(AppError);
  });

  it('computes line and column of a position', () => {
    expect(lineColumn('SELECT\n  x FORM', 12)).toEqual({ line: 2, column: 5 });
  });

  it('parses DATABASES in JSON and simple form', () => {
    expect(
      parseDatabases('{"a": {"url": "postgres://h/a", "writable": true}, "b": "postgresql://h/b", "c": {"file": "rel.sqlite"}}'),
    ).toEqual([
      { name: 'a', engine: 'postgres', url: 'postgres://h/a', writable: true },
      { name: 'b', engine: 'postgres', url: 'postgresql://h/b', writable: false },
      { name: 'c', engine: 'sqlite', file: path.resolve('rel.sqlite'), writable: false },
    ]);
    expect(parseDatabases(' a=postgres://h/a ; b=sqlite:///tmp/b.db ').map((s) => [s.name, s.engine, s.file ?? s.url])).toEqual([
      ['a', 'postgres', 'postgres://h/a'],
      ['b', 'sqlite', '/tmp/b.db'],
    ]);
    expect(() => parseDatabases('1bad=postgres://h/a')).toThrow(/must start with a letter/);
    expect(() => parseDatabases('a=postgres://h/a;a=postgres://h/b')).toThrow(/named twice/);
    expect(() => parseDatabases('{"a": {"url": "x", "file": "y"}}')).toThrow(/exactly one/);
  });

  it('maps engine errors to the documented codes', () => {
    const pgErr = (code: string, extra: Record<string, unknown> = {}) =>
      mapPgError(Object.assign(new Error('boom'), { code, ...extra }), 'SELECT\nboom');
    expect(pgErr('25006').code).toBe('FORBIDDEN');
    expect(pgErr('57014').code).toBe('TIMEOUT');
    expect(pgErr('23505').code).toBe('CONFLICT');
    expect(pgErr('42601', { position: '8' }).details).toMatchObject({ sqlState: '42601', position: 8, line: 2, column: 1 });
    expect(pgErr('ECONNREFUSED').code).toBe('UPSTREAM_UNAVAILABLE');
    expect(pgErr('28P01').code).toBe('UPSTREAM_UNAVAILABLE');
    expect(mapPgError(new Error('password authentication failed: pw123'), undefined, ['pw123']).message).not.toMatch(/pw123/);
    const sq = (code: string, message: string) =>
      mapSqliteError(Object.assign(new Error(`${code}: ${message}`), { code }), 'SELECT * FORM t');
    expect(sq('SQLITE_READONLY', 'attempt to write a readonly database').code).toBe('FORBIDDEN');
    expect(sq('SQLITE_INTERRUPT', 'interrupted').code).toBe('TIMEOUT');
    expect(sq('SQLITE_BUSY', 'database is locked').code).toBe('UPSTREAM_UNAVAILABLE');
    const syntax = sq('SQLITE_ERROR', 'near "FORM": syntax error');
    expect(syntax).toMatchObject({ code: 'VALIDATION_ERROR', details: { position: 10, positionApproximate: true } });
    expect(syntax.message).not.toMatch(/^SQLITE_ERROR/);
  });
});

describe('buildSelect', () => {
  const table: TableDescription = {
    schema: 'app',
    name: 'users',
    type: 'table',
    columns: ['id', 'name', 'we"ird'].map((name, i) => ({
      name,
      type: 'text',
      nullable: true,
      default: null,
      primaryKey: i === 0,
      position: i + 1,
    })),
    primaryKey: ['id'],
    indexes: [],
    foreignKeys: [],
  };

  it('quotes checked identifiers and binds every value, per engine', () => {
    const spec = {
      columns: ['id', 'we"ird'],
      filters: [
        { column: 'name', op: 'ilike' as const, value: 'a%' },
        { column: 'id', op: 'in' as const, value: [1, 2] },
      ],
      limit: 10,
      offset: 5,
    };
    expect(buildSelect('postgres', table, spec)).toEqual({
      sql: 'SELECT "id", "we""ird" FROM "app"."users" WHERE CAST("name" AS text) ILIKE $1 AND "id" = ANY($2) ORDER BY "id" ASC LIMIT $3 OFFSET $4',
      params: ['a%', [1, 2], 11, 5],
    });
    expect(buildSelect('sqlite', table, spec)).toEqual({
      sql: 'SELECT "id", "we""ird" FROM "users" WHERE lower("name") LIKE lower(?) AND "id" IN (?, ?) ORDER BY "id" ASC LIMIT ? OFFSET ?',
      params: ['a%', 1, 2, 11, 5],
    });
  });

  it('refuses unknown columns, naming the field', () => {
    try {
      buildSelect('sqlite', table, { filters: [{ column: 'id; DROP TABLE x', op: 'eq', value: 1 }], limit: 1 });
      throw new Error('expected an error');
    } catch (err) {
      expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'filters.0.column' }] });
    }
  });
});

describe('SqliteConnection', () => {
  let tmp: { dir: string; cleanup: () => void };
  let db: SqliteConnection;
  beforeEach(async () => {
    tmp = tempDir('sql-pkg-');
    db = await SqliteConnection.open({ name: 't', file: path.join(tmp.dir, 'a.sqlite'), writable: true, maxRows: 3, maxBytes: 200 });
  });
  afterEach(async () => {
    await db.close();
    tmp.cleanup();
  });

  it('caps rows by bytes, returns array rows and base64 blobs', async () => {
    await db.query('CREATE TABLE t (a TEXT)');
    for (let i = 0; i < 5; i++) await db.query('INSERT INTO t VALUES (?)', ['x'.repeat(60)]);
    const res = await db.query('SELECT a FROM t');
    expect(res).toMatchObject({ truncated: true, truncatedReason: 'maxBytes' });
    expect(res.rowCount).toBeLessThan(3);
    const dup = await db.query('SELECT 1 AS v, 2 AS w', [], { rowMode: 'array' });
    expect(dup.rows).toEqual([[1, 2]]);
    const blob = await db.query("SELECT x'00ff' AS b");
    expect(blob.rows).toEqual([{ b: 'AP8=' }]);
    expect(blob.columns).toEqual([{ name: 'b', type: 'blob' }]);
  });

  it('describes result columns even when no row comes back', async () => {
    await db.query('CREATE TABLE t (id INTEGER PRIMARY KEY, label VARCHAR(20))');
    const res = await db.query('SELECT id, label FROM t WHERE id = ?', [42]);
    expect(res.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'label', type: 'varchar(20)' },
    ]);
  });

  it('caches schema lookups briefly and forgets failures', async () => {
    const cache = new SchemaCache(db, 60_000);
    await expect(cache.describe('later')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await db.query('CREATE TABLE later (a INTEGER)');
    expect((await cache.describe('later')).columns.map((c) => c.name)).toEqual(['a']);
    await db.query('ALTER TABLE later ADD COLUMN b TEXT');
    expect((await cache.describe('later')).columns).toHaveLength(1);
    cache.invalidate();
    expect((await cache.describe('later')).columns).toHaveLength(2);
  });
});

describeWithBackend('postgres', 'PgConnection', () => {
  it('keeps the pool healthy after cut results, errors and timeouts', async () => {
    const scratch = await pgScratchSchema('sqlpool');
    const reader = await pgReaderRole(scratch.admin, scratch.url, scratch.schema, 'sqlpool_ro');
    const conn = new PgConnection({
      name: 'p',
      url: reader.url,
      writable: false,
      max: 1,
      maxRows: 10,
      // pg_sleep(2) runs past it; the capped generate_series (which PostgreSQL materializes first)
      // must not, even on a loaded machine (at 300 ms a CI rehearsal's ran past it)
      statementTimeoutMs: 1000,
    });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await conn.query('SELECT g FROM generate_series(1, 1000000) g')).rowCount).toBe(10);
        await expect(conn.query('SELECT 1 +')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
        await expect(conn.query('SELECT pg_sleep(2)')).rejects.toMatchObject({ code: 'TIMEOUT' });
        await expect(conn.query('SELECT $1::int; SELECT 2', [1])).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      }
      expect((await conn.query('SELECT 7 AS n, 8 AS n')).rows).toEqual([{ n: 7, n_2: 8 }]);
      expect(conn.stats().pool).toMatchObject({ total: 1, waiting: 0, max: 1 });
    } finally {
      await conn.close();
      await reader.drop();
      await scratch.drop();
    }
  });
});
