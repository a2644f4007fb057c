import fs from 'node:fs';
import path from 'node:path';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import request from 'supertest';
import { createApp } from '../src/app';
import { memoryDatabaseUrl, readConfig } from '../src/config';
import { parseSearchQuery } from '../src/query';
import { openMemoryStore, SqliteMemoryStore } from '../src/store';
import { memoryBehaviour, suiteConfig } from './memory-behaviour';

describe('memory-mcp on embedded SQLite', () => {
  const tmp = tempDir('memory-mcp-');
  afterAll(() => tmp.cleanup());

  memoryBehaviour(async () => {
    const config = suiteConfig({ DATA_DIR: tmp.dir });
    const store = await openMemoryStore(config, testLogger());
    return { svc: await createApp({ config, logger: testLogger(), store }), store };
  });
});

describe('embedded store specifics', () => {
  it('keeps memories across a restart, in DATA_DIR/memory-mcp/memories.sqlite', async () => {
    const tmp = tempDir('memory-mcp-restart-');
    try {
      const config = suiteConfig({ DATA_DIR: tmp.dir });
      const first = await createApp({ config, logger: testLogger() });
      const stored = await request(first.app)
        .post('/memory/store')
        .send({ content: 'survives restarts of the octopus service', key: 'k1', tags: ['keep'] })
        .expect(200);
      await request(first.app).post('/memory/store').send({ content: 'second entry' }).expect(200);
      await first.close();
      expect(fs.existsSync(path.join(tmp.dir, 'memory-mcp', 'memories.sqlite'))).toBe(true);

      const second = await createApp({ config, logger: testLogger() });
      const list = await request(second.app).get('/memory/list').expect(200);
      expect(list.body.result.memories).toHaveLength(2);
      const found = await request(second.app).get('/memory/search').query({ query: 'octopus' }).expect(200);
      expect(found.body.result.results[0]).toMatchObject({ id: stored.body.result.memory.id, key: 'k1', tags: ['keep'] });
      const again = await request(second.app).post('/memory/store').send({ content: 'updated after restart', key: 'k1' }).expect(200);
      expect(again.body.result).toMatchObject({ created: false, memory: { id: stored.body.result.memory.id } });
      await second.close();
    } finally {
      tmp.cleanup();
    }
  });

  it('ranks a search over several read connections (one rowid range each) with exactly the answer of one', async () => {
    const tmp = tempDir('memory-mcp-shards-');
    const file = path.join(tmp.dir, 'm.sqlite');
    const single = await SqliteMemoryStore.open(file);
    const sharded = await SqliteMemoryStore.open(file, { searchShards: 3 });
    try {
      const words = 'walrus tusk ivory arctic seal krill floe narwhal'.split(' ');
      let seed = 11;
      const pick = () => {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        return words[Math.floor((seed / 2 ** 32) * words.length)];
      };
      await single.storeMany(
        Array.from({ length: 400 }, (_, i) => ({
          content: Array.from({ length: 3 + (i % 7) }, pick).join(' '),
          type: i % 3 ? 'note' : 'fact',
          tags: i % 4 ? [] : ['polar'],
          importance: 0.5,
          metadata: {},
        })),
      );
      const cases: [string, Partial<Parameters<typeof single.search>[0]>][] = [
        ['walrus', {}],
        ['seal OR krill', { offset: 7, limit: 9 }],
        ['"arctic seal"', {}],
        ['ivory -floe', { type: 'fact' }],
        ['narwhal', { tags: ['polar'], limit: 50 }],
        ['penguin', {}],
      ];
      for (const [query, extra] of cases) {
        const q = { query: parseSearchQuery(query), tags: [], offset: 0, limit: 10, ...extra };
        const one = await single.search(q);
        const many = await sharded.search(q);
        expect(many.map((h) => [h.memory.id, h.score, h.snippet])).toEqual(one.map((h) => [h.memory.id, h.score, h.snippet]));
        if (query !== 'penguin') expect(one.length).toBeGreaterThan(0);
      }
    } finally {
      await sharded.close();
      await single.close();
      tmp.cleanup();
    }
  });

  it('ranks in two stages without changing the answer: filters, ties newest first, pages and snippets', async () => {
    const tmp = tempDir('memory-mcp-rank-');
    const store = await SqliteMemoryStore.open(path.join(tmp.dir, 'm.sqlite'));
    try {
      // Equal bm25 scores (same text), then a better match, with a type and tag filter on some.
      const same = [];
      for (const input of Array.from({ length: 5 }, (_, i) => ({
        content: 'walrus tusk ivory',
        type: i % 2 ? 'fact' : 'note',
        tags: i < 3 ? ['arctic'] : [],
        importance: 0.5,
        metadata: {},
      })))
        same.push(await store.store(input));
      const best = await store.store({ content: 'walrus walrus walrus', type: 'note', tags: [], importance: 0.5, metadata: {} });
      const search = (extra: Partial<Parameters<typeof store.search>[0]> = {}) =>
        store.search({ query: parseSearchQuery('walrus'), tags: [], offset: 0, limit: 10, ...extra });
      const all = await search();
      expect(all.map((h) => h.memory.id)).toEqual([best.memory.id, ...same.map((r) => r.memory.id).reverse()]);
      expect(all[0].score).toBeGreaterThan(all[1].score);
      expect(all[1].snippet).toBe('**walrus** tusk ivory');
      const page2 = await search({ offset: 2, limit: 2 });
      expect(page2.map((h) => h.memory.id)).toEqual(all.slice(2, 4).map((h) => h.memory.id));
      const facts = await search({ type: 'fact', tags: ['arctic'] });
      expect(facts.map((h) => h.memory.id)).toEqual([same[1].memory.id]);
      expect(await search({ query: parseSearchQuery('narwhal') })).toEqual([]);
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });

  describe('FTS5 index kept in one segment (schema version 2)', () => {
    const words = 'walrus tusk ivory arctic seal krill floe narwhal orca beluga'.split(' ');
    const load = async (store: SqliteMemoryStore, batches: number, size: number) => {
      let seed = 5;
      const pick = () => {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        return words[Math.floor((seed / 2 ** 32) * words.length)];
      };
      for (let b = 0; b < batches; b++) {
        await store.storeMany(
          Array.from({ length: size }, (_, i) => ({
            content: `${Array.from({ length: 6 + (i % 9) }, pick).join(' ')} n${b}x${i}`,
            type: i % 3 ? 'note' : 'fact',
            tags: i % 4 ? [] : ['cold'],
            importance: 0.5,
            metadata: { b, i },
          })),
        );
      }
    };
    const queries = ['walrus', 'seal OR orca', '"arctic seal"', 'krill -floe', 'narwhal beluga tusk'];
    type Case = { q: string; type?: string; tags?: string[]; offset?: number };
    const cases: Case[] = [...queries.map((q) => ({ q })), { q: 'walrus', type: 'fact', tags: ['cold'] }, { q: 'seal', offset: 7 }];
    const answers = async (store: SqliteMemoryStore) =>
      Promise.all(
        cases.map(async (c) =>
          (await store.search({ query: parseSearchQuery(c.q), type: c.type, tags: c.tags ?? [], offset: c.offset ?? 0, limit: 10 })).map(
            (h) => [h.memory.content, h.score, h.snippet],
          ),
        ),
      );
    const inspect = async (file: string) => {
      const db = await SqliteDb.open(file, { readonly: true });
      try {
        const segments = (await db.get<{ n: number }>('SELECT count(DISTINCT segid) AS n FROM memories_fts_idx'))!.n;
        const version = (await db.get<{ user_version: number }>('PRAGMA user_version'))!.user_version;
        return { segments, version };
      } finally {
        await db.close();
      }
    };

    it('merges the index after bulk writes, with the same answers as an index left in many segments', async () => {
      const tmp = tempDir('memory-mcp-compact-');
      const merged = await SqliteMemoryStore.open(path.join(tmp.dir, 'merged.sqlite'));
      const split = await SqliteMemoryStore.open(path.join(tmp.dir, 'split.sqlite'), { compact: false });
      try {
        await load(merged, 12, 400);
        await load(split, 12, 400);
        expect(await inspect(path.join(tmp.dir, 'merged.sqlite'))).toEqual({ segments: 1, version: 2 });
        expect((await inspect(path.join(tmp.dir, 'split.sqlite'))).segments).toBeGreaterThan(3);
        const got = await answers(merged);
        expect(got).toEqual(await answers(split));
        expect(got.every((a) => a.length > 0)).toBe(true);
        expect(got[0][0][2]).toMatch(/\*\*walrus\*\*/);
      } finally {
        await merged.close();
        await split.close();
        tmp.cleanup();
      }
    });

    it('migrates a version 1 database on open (index merged, answers unchanged) and refuses a newer one', async () => {
      const tmp = tempDir('memory-mcp-migrate-');
      const file = path.join(tmp.dir, 'm.sqlite');
      try {
        // Version 1 had these same tables and left the index to FTS5's automerge.
        const old = await SqliteMemoryStore.open(file, { compact: false });
        await load(old, 12, 400);
        const before = await answers(old);
        await old.close();
        const raw = await SqliteDb.open(file);
        await raw.exec('PRAGMA user_version = 1');
        await raw.close();
        expect((await inspect(file)).segments).toBeGreaterThan(3);

        const reopened = await SqliteMemoryStore.open(file);
        try {
          expect(await inspect(file)).toEqual({ segments: 1, version: 2 });
          expect(await answers(reopened)).toEqual(before);
          expect((await reopened.stats()).total).toBe(12 * 400);
        } finally {
          await reopened.close();
        }

        const newer = await SqliteDb.open(file);
        await newer.exec('PRAGMA user_version = 3');
        await newer.close();
        await expect(SqliteMemoryStore.open(file)).rejects.toThrow(/schema version 3/);
      } finally {
        tmp.cleanup();
      }
    });
  });

  it('chooses PostgreSQL only for postgres URLs and fails fast on bad settings', () => {
    expect(memoryDatabaseUrl(readConfig({}))).toBeUndefined();
    expect(memoryDatabaseUrl(readConfig({ DATABASE_URL: 'mysql://x/y' }))).toBeUndefined();
    expect(memoryDatabaseUrl(readConfig({ DATABASE_URL: 'postgres://a/b' }))).toBe('postgres://a/b');
    expect(memoryDatabaseUrl(readConfig({ DATABASE_URL: 'postgres://a/b', MEMORY_DATABASE_URL: 'postgresql://c/d' }))).toBe(
      'postgresql://c/d',
    );
    expect(() => readConfig({ MEMORY_PG_SCHEMA: 'x"; DROP SCHEMA public; --' })).toThrow(/MEMORY_PG_SCHEMA/);
    expect(() => readConfig({ MEMORY_PG_TS_CONFIG: "english'); --" })).toThrow(/MEMORY_PG_TS_CONFIG/);
    expect(() => readConfig({ MEMORY_DATABASE_URL: 'mysql://x' })).toThrow(/MEMORY_DATABASE_URL/);
  });
});
