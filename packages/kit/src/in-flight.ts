/**
 * What is in flight on a hot path (calls, their controllers, their promises) by id: the part of a
 * Map's interface such tables use, over a dictionary object instead of a Map.
 *
 * Why not a Map: V8 moves a Map to a new hash table every few dozen insertions and leaves in the
 * outgrown table its entries and a link to the new one (for iterators still walking it). Once one
 * of those tables is in the old generation (a full GC moves the live table there), it is never
 * looked at by a scavenge, so its link keeps the next table alive through every scavenge, that one
 * the next, and with each table every value it held. A table of calls in flight outgrows itself
 * every few dozen calls, so until the next full GC every call's objects were kept and promoted:
 * about 10 KB a call through the gateway, scavenges several times longer, and an old generation
 * that grew by megabytes a second (issue 14; docs/gateway.md "Performance"). A dictionary object
 * grows by copying into a new store without a link back, so a finished call is garbage at the
 * next scavenge.
 *
 * Keys are numbers or strings and stay distinct (1 and "1" are two JSON-RPC ids).
 */
export class InFlight<K extends string | number, V> {
  private entries: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;
  private lastKey = 0;

  /** Numbers keep their own spelling ("1", "1.5"); strings get a prefix no number's spelling has. */
  private static slot(key: string | number): string | number {
    return typeof key === 'number' ? key : `s${key}`;
  }

  get size(): number {
    return this.count;
  }

  get(key: K): V | undefined {
    return this.entries[InFlight.slot(key)];
  }

  has(key: K): boolean {
    return InFlight.slot(key) in this.entries;
  }

  set(key: K, value: V): this {
    const slot = InFlight.slot(key);
    if (!(slot in this.entries)) this.count += 1;
    this.entries[slot] = value;
    return this;
  }

  /** Keeps a value under a key of its own (for a table used as a set): the key, to delete it by. */
  add(this: InFlight<number, V>, value: V): number {
    this.set(++this.lastKey, value);
    return this.lastKey;
  }

  /** Whether the key was there. */
  delete(key: K): boolean {
    const slot = InFlight.slot(key);
    if (!(slot in this.entries)) return false;
    delete this.entries[slot];
    this.count -= 1;
    return true;
  }

  /** A copy of the values, so that the table can change while the caller goes through them. */
  values(): V[] {
    const out: V[] = [];
    for (const slot in this.entries) out.push(this.entries[slot]);
    return out;
  }

  clear(): void {
    this.entries = Object.create(null) as Record<string, V>;
    this.count = 0;
  }
}
