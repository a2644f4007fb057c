import type { PointId } from './ids';
import type { Condition, FieldCondition, Filter, Payload } from './types';

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * The values a key path reaches. Dots descend into objects (own keys only, so "constructor" or
 * "__proto__" never reach Object.prototype); "name[]" descends into each element of an array.
 * A final array value contributes its elements, as in Qdrant.
 */
export function valuesAt(payload: Payload, key: string): unknown[] {
  let current: unknown[] = [payload];
  for (const segment of key.split('.')) {
    const expand = segment.endsWith('[]');
    const name = expand ? segment.slice(0, -2) : segment;
    const next: unknown[] = [];
    for (const value of current) {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || !own(value, name)) continue;
      const child = (value as Record<string, unknown>)[name];
      if (expand) {
        if (Array.isArray(child)) next.push(...child);
      } else {
        next.push(child);
      }
    }
    current = next;
  }
  const out: unknown[] = [];
  for (const v of current) {
    if (Array.isArray(v)) out.push(...v);
    else out.push(v);
  }
  return out;
}

function matchesField(c: FieldCondition, payload: Payload): boolean {
  const values = valuesAt(payload, c.key);
  if (c.match) {
    if ('value' in c.match) {
      const wanted = c.match.value;
      return values.some((v) => v === wanted);
    }
    const any = c.match.any as unknown[];
    return values.some((v) => (typeof v === 'string' || typeof v === 'number') && any.includes(v));
  }
  const r = c.range!;
  return values.some(
    (v) =>
      typeof v === 'number' &&
      (r.gt === undefined || v > r.gt) &&
      (r.gte === undefined || v >= r.gte) &&
      (r.lt === undefined || v < r.lt) &&
      (r.lte === undefined || v <= r.lte),
  );
}

function matchesCondition(c: Condition, id: PointId, payload: Payload): boolean {
  if ('key' in c) return matchesField(c as FieldCondition, payload);
  if ('has_id' in c) return c.has_id.includes(id);
  return matchesFilter(c as Filter, id, payload);
}

/** Qdrant semantics: all of must, at least one of a non-empty should, none of must_not. */
export function matchesFilter(filter: Filter, id: PointId, payload: Payload): boolean {
  if (filter.must && !filter.must.every((c) => matchesCondition(c, id, payload))) return false;
  if (filter.should && filter.should.length > 0 && !filter.should.some((c) => matchesCondition(c, id, payload))) return false;
  if (filter.must_not && filter.must_not.some((c) => matchesCondition(c, id, payload))) return false;
  return true;
}

/** Drops empty lists, so Qdrant and the embedded store read `should: []` the same way (as absent). */
export function normaliseFilter(filter: Filter): Filter {
  const out: Filter = {};
  for (const k of ['must', 'should', 'must_not'] as const) {
    const list = filter[k];
    if (list && list.length > 0) {
      out[k] = list.map((c) => ('key' in c || 'has_id' in c ? c : normaliseFilter(c as Filter)));
    }
  }
  return out;
}
