import { randomBytes } from 'node:crypto';
import type { Filter, PointId, VectorStore } from '../src';

export interface StoreHarness {
  store: () => VectorStore;
  /** Close and open the same store again (persistence); absent for stores that are always remote. */
  reopen?: () => Promise<void>;
}

const rejectsWith = (p: Promise<unknown>, code: string, message?: RegExp) =>
  expect(p).rejects.toMatchObject({ code, ...(message ? { message: expect.stringMatching(message) } : {}) });

const U1 = '550e8400-e29b-41d4-a716-446655440000';
const U2 = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

interface Doc {
  id: PointId;
  payload: Record<string, unknown>;
}

/** A small dataset and an independent predicate per filter: the expected results are computed here, not by the store. */
const cities = ['berlin', 'paris', 'rome'];
const docs: Doc[] = Array.from({ length: 30 }, (_, i) => ({
  id: i,
  payload: {
    city: cities[i % 3],
    n: i,
    score: i / 10,
    tags: i % 2 === 0 ? ['even', `t${i % 5}`] : ['odd'],
    meta: { lang: i % 4 === 0 ? 'de' : 'en', nested: { level: i % 7 } },
    flag: i % 5 === 0,
    ...(i % 6 === 0
      ? {
          items: [
            { kind: 'x', qty: i },
            { kind: 'y', qty: 1 },
          ],
        }
      : {}),
  },
}));

const filterCases: { title: string; filter: Filter; expect: (d: Doc['payload'], id: PointId) => boolean }[] = [
  { title: 'match value (string)', filter: { must: [{ key: 'city', match: { value: 'paris' } }] }, expect: (p) => p.city === 'paris' },
  { title: 'match value (integer)', filter: { must: [{ key: 'n', match: { value: 7 } }] }, expect: (p) => p.n === 7 },
  { title: 'match value (boolean)', filter: { must: [{ key: 'flag', match: { value: true } }] }, expect: (p) => p.flag === true },
  { title: 'match any', filter: { must: [{ key: 'city', match: { any: ['rome', 'berlin'] } }] }, expect: (p) => p.city !== 'paris' },
  {
    title: 'array payload matches any element',
    filter: { must: [{ key: 'tags', match: { value: 't3' } }] },
    expect: (p) => (p.tags as string[]).includes('t3'),
  },
  {
    title: 'range gte/lt',
    filter: { must: [{ key: 'n', range: { gte: 5, lt: 12 } }] },
    expect: (p) => (p.n as number) >= 5 && (p.n as number) < 12,
  },
  {
    title: 'range on floats gt/lte',
    filter: { must: [{ key: 'score', range: { gt: 1.05, lte: 2 } }] },
    expect: (p) => (p.score as number) > 1.05 && (p.score as number) <= 2,
  },
  {
    title: 'dotted key',
    filter: { must: [{ key: 'meta.lang', match: { value: 'de' } }] },
    expect: (p) => (p.meta as { lang: string }).lang === 'de',
  },
  {
    title: 'deep dotted key with range',
    filter: { must: [{ key: 'meta.nested.level', range: { lte: 1 } }] },
    expect: (p) => (p.meta as { nested: { level: number } }).nested.level <= 1,
  },
  {
    title: 'array of objects with []',
    filter: { must: [{ key: 'items[].qty', range: { gt: 10 } }] },
    expect: (p) => Array.isArray(p.items) && (p.items as { qty: number }[]).some((x) => x.qty > 10),
  },
  {
    title: 'should (any of)',
    filter: {
      should: [
        { key: 'city', match: { value: 'rome' } },
        { key: 'n', range: { lt: 3 } },
      ],
    },
    expect: (p) => p.city === 'rome' || (p.n as number) < 3,
  },
  {
    title: 'must_not',
    filter: { must_not: [{ key: 'tags', match: { value: 'odd' } }] },
    expect: (p) => !(p.tags as string[]).includes('odd'),
  },
  {
    title: 'must + should + must_not + nested filter',
    filter: {
      must: [{ key: 'meta.lang', match: { value: 'en' } }],
      should: [
        { key: 'city', match: { value: 'berlin' } },
        {
          must: [
            { key: 'flag', match: { value: true } },
            { key: 'n', range: { gt: 10 } },
          ],
        },
      ],
      must_not: [{ has_id: [1, 2, 3] }],
    },
    expect: (p, id) =>
      (p.meta as { lang: string }).lang === 'en' &&
      (p.city === 'berlin' || (p.flag === true && (p.n as number) > 10)) &&
      ![1, 2, 3].includes(id as number),
  },
  { title: 'has_id', filter: { must: [{ has_id: [4, 9, 99] }] }, expect: (_p, id) => [4, 9].includes(id as number) },
  { title: 'missing key matches nothing', filter: { must: [{ key: 'absent', match: { value: 'x' } }] }, expect: () => false },
  { title: 'prototype keys are not payload keys', filter: { must: [{ key: 'constructor', range: { gte: 0 } }] }, expect: () => false },
  { title: 'type-strict match (string "7" is not 7)', filter: { must: [{ key: 'n', match: { value: '7' } }] }, expect: () => false },
  { title: 'empty should is ignored', filter: { must: [{ key: 'n', range: { lt: 2 } }], should: [] }, expect: (p) => (p.n as number) < 2 },
];

function vectorFor(i: number): number[] {
  return [Math.cos(i / 5), Math.sin(i / 5), (i % 7) / 7, 1];
}

export function describeVectorStoreBehaviour(title: string, harness: StoreHarness): void {
  describe(title, () => {
    const prefix = `t${randomBytes(4).toString('hex')}`;
    const name = (s: string) => `${prefix}_${s}`;
    const store = () => harness.store();

    afterAll(async () => {
      for (const c of await store().listCollections()) if (c.startsWith(prefix)) await store().deleteCollection(c);
    });

    it('creates, lists, describes and deletes collections', async () => {
      const info = await store().createCollection({ name: name('life'), size: 3, distance: 'Dot' });
      expect(info).toEqual({ name: name('life'), size: 3, distance: 'Dot', pointsCount: 0 });
      expect(await store().listCollections()).toContain(name('life'));
      expect(await store().hasCollection(name('life'))).toBe(true);
      await rejectsWith(store().createCollection({ name: name('life'), size: 3, distance: 'Dot' }), 'CONFLICT', /already exists/);
      expect(await store().deleteCollection(name('life'))).toBe(true);
      expect(await store().deleteCollection(name('life'))).toBe(false);
      await rejectsWith(store().collectionInfo(name('life')), 'NOT_FOUND', /does not exist/);
      await rejectsWith(store().search(name('life'), { vector: [1, 2, 3] }), 'NOT_FOUND');
      await rejectsWith(store().upsert(name('life'), [{ id: 1, vector: [1, 2, 3] }]), 'NOT_FOUND');
    });

    it('refuses bad collection specs', async () => {
      await rejectsWith(store().createCollection({ name: 'bad/name', size: 3, distance: 'Dot' }), 'VALIDATION_ERROR');
      await rejectsWith(store().createCollection({ name: '', size: 3, distance: 'Dot' }), 'VALIDATION_ERROR');
      for (const size of [0, 4097, 1.5, -3]) {
        await rejectsWith(store().createCollection({ name: name('spec'), size, distance: 'Dot' }), 'VALIDATION_ERROR', /1 to 4096/);
      }
      await rejectsWith(store().createCollection({ name: name('spec'), size: 3, distance: 'Manhattan' as 'Dot' }), 'VALIDATION_ERROR');
      expect(await store().hasCollection(name('spec'))).toBe(false);
    });

    it('scores Cosine, Dot and Euclid as hand-computed, with Qdrant ordering', async () => {
      await store().createCollection({ name: name('cos'), size: 2, distance: 'Cosine' });
      await store().upsert(name('cos'), [
        { id: 1, vector: [2, 0] },
        { id: 2, vector: [1, 1] },
        { id: 3, vector: [0, 5] },
        { id: 4, vector: [-1, 0] },
      ]);
      const cos = await store().search(name('cos'), { vector: [3, 0], limit: 4 });
      expect(cos.map((h) => h.id)).toEqual([1, 2, 3, 4]);
      [1, Math.SQRT1_2, 0, -1].forEach((s, i) => expect(cos[i].score).toBeCloseTo(s, 5));
      const stored = await store().fetch(name('cos'), [2], { withVectors: true });
      expect(stored[0].vector![0]).toBeCloseTo(Math.SQRT1_2, 5);
      expect(stored[0].vector![1]).toBeCloseTo(Math.SQRT1_2, 5);

      await store().createCollection({ name: name('dot'), size: 2, distance: 'Dot' });
      await store().upsert(name('dot'), [
        { id: 1, vector: [3, 4] },
        { id: 2, vector: [-1, 1] },
        { id: 3, vector: [0.5, 0.5] },
      ]);
      const dot = await store().search(name('dot'), { vector: [1, 2], limit: 3, withVectors: true });
      expect(dot.map((h) => [h.id, h.score])).toEqual([
        [1, 11],
        [3, 1.5],
        [2, 1],
      ]);
      expect(dot[0].vector).toEqual([3, 4]);

      await store().createCollection({ name: name('euc'), size: 2, distance: 'Euclid' });
      await store().upsert(name('euc'), [
        { id: 1, vector: [3, 4] },
        { id: 2, vector: [1, 1] },
        { id: 3, vector: [0, 2] },
      ]);
      const euc = await store().search(name('euc'), { vector: [0, 0], limit: 3 });
      expect(euc.map((h) => h.id)).toEqual([2, 3, 1]);
      [Math.SQRT2, 2, 5].forEach((s, i) => expect(euc[i].score).toBeCloseTo(s, 5));

      const cosT = await store().search(name('cos'), { vector: [1, 0], limit: 10, scoreThreshold: 0.5 });
      expect(cosT.map((h) => h.id)).toEqual([1, 2]);
      const eucT = await store().search(name('euc'), { vector: [0, 0], limit: 10, scoreThreshold: 2.01 });
      expect(eucT.map((h) => h.id)).toEqual([2, 3]);
      const limited = await store().search(name('dot'), { vector: [1, 2], limit: 1, withPayload: false });
      expect(limited).toEqual([{ id: 1, score: 11 }]);
    });

    it('stores integer and UUID ids, normalises UUID case and upserts by id', async () => {
      await store().createCollection({ name: name('ids'), size: 2, distance: 'Dot' });
      await store().upsert(name('ids'), [
        { id: 0, vector: [1, 0], payload: { v: 'zero' } },
        { id: Number.MAX_SAFE_INTEGER, vector: [0, 1], payload: { v: 'max' } },
        { id: U1.toUpperCase(), vector: [1, 1], payload: { v: 'uuid' } },
      ]);
      const got = await store().fetch(name('ids'), [U1, 0, Number.MAX_SAFE_INTEGER, 12345]);
      expect(got).toEqual([
        { id: U1, payload: { v: 'uuid' } },
        { id: 0, payload: { v: 'zero' } },
        { id: Number.MAX_SAFE_INTEGER, payload: { v: 'max' } },
      ]);
      await store().upsert(name('ids'), [{ id: 0, vector: [2, 0] }]);
      const replaced = await store().fetch(name('ids'), [0], { withVectors: true });
      expect(replaced).toEqual([{ id: 0, payload: {}, vector: [2, 0] }]);
      expect((await store().collectionInfo(name('ids'))).pointsCount).toBe(3);
    });

    it('refuses bad ids with VALIDATION_ERROR and stores nothing', async () => {
      await store().createCollection({ name: name('badids'), size: 2, distance: 'Dot' });
      for (const id of [-1, 1.5, 'abc', '123', `${U1}0`, '550e8400e29b41d4a716446655440000', Number.MAX_SAFE_INTEGER + 1, null, {}]) {
        await rejectsWith(
          store().upsert(name('badids'), [
            { id: 1, vector: [1, 1] },
            { id: id as PointId, vector: [1, 1] },
          ]),
          'VALIDATION_ERROR',
          /unsigned integer .* or a UUID/,
        );
        await rejectsWith(store().fetch(name('badids'), [id as PointId]), 'VALIDATION_ERROR');
        await rejectsWith(store().delete(name('badids'), { ids: [id as PointId] }), 'VALIDATION_ERROR');
      }
      expect((await store().collectionInfo(name('badids'))).pointsCount).toBe(0);
    });

    it('refuses wrong sizes, NaN, Infinity and out-of-range numbers, changing nothing', async () => {
      await store().createCollection({ name: name('vec'), size: 3, distance: 'Cosine' });
      await store().upsert(name('vec'), [{ id: 1, vector: [1, 2, 3], payload: { keep: true } }]);
      const before = await store().fetch(name('vec'), [1], { withVectors: true });
      const bad: unknown[][] = [[1, 2], [1, 2, 3, 4], [], [1, Number.NaN, 3], [1, Infinity, 3], [1, 'NaN', 3], [1, 1e39, 3], [1, null, 3]];
      for (const vector of bad) {
        await rejectsWith(
          store().upsert(name('vec'), [
            { id: 1, vector: [9, 9, 9], payload: { keep: false } },
            { id: 2, vector: vector as number[] },
          ]),
          'VALIDATION_ERROR',
          vector.length !== 3 ? /expects 3/ : /finite/,
        );
        await rejectsWith(store().search(name('vec'), { vector: vector as number[] }), 'VALIDATION_ERROR');
      }
      await rejectsWith(store().update(name('vec'), [{ id: 1, vector: [1, 2] }]), 'VALIDATION_ERROR', /expects 3/);
      expect(await store().fetch(name('vec'), [1], { withVectors: true })).toEqual(before);
      expect((await store().collectionInfo(name('vec'))).pointsCount).toBe(1);
    });

    it('caps payload size, payload depth and points per call', async () => {
      await store().createCollection({ name: name('caps'), size: 2, distance: 'Dot' });
      const huge = { blob: 'x'.repeat(store().limits.maxPayloadBytes + 1) };
      await rejectsWith(store().upsert(name('caps'), [{ id: 1, vector: [1, 1], payload: huge }]), 'PAYLOAD_TOO_LARGE', /bytes/);
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) deep = { d: deep };
      await rejectsWith(store().upsert(name('caps'), [{ id: 1, vector: [1, 1], payload: deep }]), 'VALIDATION_ERROR', /deeper/);
      await rejectsWith(
        store().upsert(name('caps'), [{ id: 1, vector: [1, 1], payload: [1] as unknown as Record<string, unknown> }]),
        'VALIDATION_ERROR',
      );
      const many = Array.from({ length: store().limits.maxPointsPerCall + 1 }, (_, i) => ({ id: i, vector: [1, 1] }));
      await rejectsWith(store().upsert(name('caps'), many), 'PAYLOAD_TOO_LARGE', /at most/);
      await rejectsWith(store().upsert(name('caps'), []), 'VALIDATION_ERROR');
      expect((await store().collectionInfo(name('caps'))).pointsCount).toBe(0);
    });

    describe('filters', () => {
      beforeAll(async () => {
        await store().createCollection({ name: name('flt'), size: 4, distance: 'Cosine' });
        await store().upsert(
          name('flt'),
          docs.map((d) => ({ id: d.id, vector: vectorFor(d.id as number), payload: d.payload })),
        );
      });

      it.each(filterCases)('search, count and scroll agree with the expected set: $title', async ({ filter, expect: predicate }) => {
        const expected = docs
          .filter((d) => predicate(d.payload, d.id))
          .map((d) => d.id)
          .sort((a, b) => (a as number) - (b as number));
        const hits = await store().search(name('flt'), { vector: [1, 0, 0, 1], limit: 100, filter, withPayload: false });
        expect(hits.map((h) => h.id).sort((a, b) => (a as number) - (b as number))).toEqual(expected);
        expect(await store().count(name('flt'), filter)).toBe(expected.length);
        const page = await store().scroll(name('flt'), { filter, limit: 100, withPayload: false });
        expect(page.points.map((p) => p.id)).toEqual(expected);
      });

      it('refuses malformed filters', async () => {
        const bad: unknown[] = [
          { must: [{ key: 'city' }] },
          { must: [{ key: 'city', match: { value: 1.5 } }] },
          { must: [{ key: 'n', range: {} }] },
          { must: [{ key: 'n', match: { any: ['a', 1] } }] },
          { must: [{ key: 'a..b', match: { value: 1 } }] },
          { must: [{ has_id: [-1] }] },
          { nope: [] },
          JSON.parse('{"must":[' + '{"must":['.repeat(40) + ']}'.repeat(40) + ']}'),
        ];
        for (const filter of bad) {
          await rejectsWith(store().search(name('flt'), { vector: [1, 0, 0, 1], filter: filter as Filter }), 'VALIDATION_ERROR');
        }
      });

      it('ranks filtered results by cosine similarity computed independently', async () => {
        const q = vectorFor(12);
        const cosine = (a: number[], b: number[]) => {
          const dot = a.reduce((s, x, i) => s + x * b[i], 0);
          return dot / Math.hypot(...a) / Math.hypot(...b);
        };
        const expected = docs
          .filter((d) => d.payload.city === 'rome')
          .map((d) => ({ id: d.id, score: cosine(q, vectorFor(d.id as number)) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, 3);
        const hits = await store().search(name('flt'), {
          vector: q,
          limit: 3,
          filter: { must: [{ key: 'city', match: { value: 'rome' } }] },
        });
        expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
        hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i].score, 5));
        expect(hits.every((h) => h.payload!.city === 'rome')).toBe(true);
      });
    });

    it('updates payloads (merge or replace) and vectors, and refuses unknown ids without changing anything', async () => {
      await store().createCollection({ name: name('upd'), size: 2, distance: 'Dot' });
      await store().upsert(name('upd'), [
        { id: 1, vector: [1, 0], payload: { a: 1, b: 2 } },
        { id: 2, vector: [0, 1], payload: { a: 5 } },
      ]);
      expect(await store().update(name('upd'), [{ id: 1, payload: { b: 3, c: 4 } }])).toEqual({ updated: 1 });
      expect((await store().fetch(name('upd'), [1]))[0].payload).toEqual({ a: 1, b: 3, c: 4 });
      await store().update(name('upd'), [{ id: 1, payload: { only: true } }], { payloadMode: 'replace' });
      expect((await store().fetch(name('upd'), [1]))[0].payload).toEqual({ only: true });
      await store().update(name('upd'), [{ id: 2, vector: [3, 3] }]);
      expect(await store().fetch(name('upd'), [2], { withVectors: true })).toEqual([{ id: 2, payload: { a: 5 }, vector: [3, 3] }]);
      await rejectsWith(
        store().update(name('upd'), [
          { id: 2, payload: { a: 6 } },
          { id: 77, payload: { a: 7 } },
        ]),
        'NOT_FOUND',
        /77/,
      );
      expect((await store().fetch(name('upd'), [2]))[0].payload).toEqual({ a: 5 });
      await rejectsWith(store().update(name('upd'), [{ id: 2 }]), 'VALIDATION_ERROR', /changes nothing/);
    });

    it('deletes by ids and by filter, refusing an empty filter', async () => {
      await store().createCollection({ name: name('del'), size: 2, distance: 'Dot' });
      await store().upsert(
        name('del'),
        Array.from({ length: 10 }, (_, i) => ({ id: i, vector: [i, 1], payload: { even: i % 2 === 0 } })),
      );
      expect(await store().delete(name('del'), { ids: [1, 3, 99] })).toEqual({ deleted: 2 });
      expect(await store().delete(name('del'), { filter: { must: [{ key: 'even', match: { value: true } }] } })).toEqual({ deleted: 5 });
      await rejectsWith(store().delete(name('del'), { filter: {} }), 'VALIDATION_ERROR', /delete the collection/);
      const left = await store().scroll(name('del'), { limit: 100 });
      expect(left.points.map((p) => p.id)).toEqual([5, 7, 9]);
      const hits = await store().search(name('del'), { vector: [1, 0], limit: 10 });
      expect(hits.map((h) => h.id)).toEqual([9, 7, 5]);
    });

    it('scrolls in id order (integers, then UUIDs) with nextOffset', async () => {
      await store().createCollection({ name: name('scr'), size: 2, distance: 'Dot' });
      await store().upsert(name('scr'), [
        { id: U2, vector: [1, 1] },
        { id: 10, vector: [1, 1] },
        { id: U1, vector: [1, 1] },
        { id: 2, vector: [1, 1] },
      ]);
      const first = await store().scroll(name('scr'), { limit: 3, withPayload: false });
      expect(first.points.map((p) => p.id)).toEqual([2, 10, U1]);
      expect(first.nextOffset).toBe(U2);
      const second = await store().scroll(name('scr'), { limit: 3, offset: first.nextOffset });
      expect(second.points.map((p) => p.id)).toEqual([U2]);
      expect(second.nextOffset).toBeUndefined();
    });

    if (harness.reopen) {
      it('keeps collections, points, payloads and vectors across a restart', async () => {
        await store().createCollection({ name: name('keep'), size: 3, distance: 'Euclid' });
        await store().upsert(name('keep'), [
          { id: 1, vector: [1, 2, 3], payload: { title: 'one', tags: ['a'] } },
          { id: U1, vector: [0.5, -1, 2], payload: { title: 'uuid' } },
          { id: 3, vector: [7, 7, 7] },
        ]);
        await store().delete(name('keep'), { ids: [3] });
        await store().update(name('keep'), [{ id: 1, payload: { more: 1 } }]);
        await harness.reopen!();
        expect(await store().collectionInfo(name('keep'))).toEqual({ name: name('keep'), size: 3, distance: 'Euclid', pointsCount: 2 });
        expect(await store().fetch(name('keep'), [1, U1, 3], { withVectors: true })).toEqual([
          { id: 1, payload: { title: 'one', tags: ['a'], more: 1 }, vector: [1, 2, 3] },
          { id: U1, payload: { title: 'uuid' }, vector: [0.5, -1, 2] },
        ]);
        const hits = await store().search(name('keep'), { vector: [1, 2, 3], limit: 1 });
        expect(hits[0]).toMatchObject({ id: 1, score: 0 });
      });
    }
  });
}
