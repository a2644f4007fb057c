import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { InFlight } from '../src/in-flight';

describe('InFlight', () => {
  it('keeps numbers and strings apart, counts, and deletes', () => {
    const t = new InFlight<string | number, string>();
    t.set(1, 'number one').set('1', 'string one').set('__proto__', 'odd name').set(-2.5, 'fraction');
    expect(t.size).toBe(4);
    expect(t.get(1)).toBe('number one');
    expect(t.get('1')).toBe('string one');
    expect(t.get('__proto__')).toBe('odd name');
    expect(t.get(-2.5)).toBe('fraction');
    expect(t.has('-2.5')).toBe(false);
    t.set(1, 'replaced');
    expect(t.size).toBe(4);
    expect(t.delete(1)).toBe(true);
    expect(t.delete(1)).toBe(false);
    expect(t.has(1)).toBe(false);
    expect(t.size).toBe(3);
    expect(t.values().sort()).toEqual(['fraction', 'odd name', 'string one']);
  });

  it('gives a copy of its values, so the table can change while they are gone through', () => {
    const t = new InFlight<number, number>();
    for (let i = 0; i < 5; i++) t.set(i, i);
    const seen: number[] = [];
    for (const v of t.values()) {
      seen.push(v);
      t.delete(v + 1);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    t.clear();
    expect(t.size).toBe(0);
    expect(t.values()).toEqual([]);
    const keys = [t.add(7), t.add(7)];
    expect(keys[0]).not.toBe(keys[1]);
    expect(t.size).toBe(2);
    expect(t.delete(keys[0])).toBe(true);
    expect(t.values()).toEqual([7]);
  });

  // Why the class exists: a Map churned like a table of calls in flight keeps what was deleted from
  // it alive through minor GCs once one of its stores is old (each outgrown store links the next).
  const churn = async (kind: string) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', path.join(__dirname, 'fixtures', 'in-flight-churn.ts'), kind],
      { cwd: path.join(__dirname, '..') },
    );
    return JSON.parse(stdout) as { oldGenerationGrewBytes?: number; heapGrewBytes?: number };
  };

  it('leaves nothing of finished calls in the old generation, where a Map keeps them all', async () => {
    const run = async (kind: string) => (await churn(kind)).oldGenerationGrewBytes!;
    const [map, inFlight] = await Promise.all([run('map'), run('in-flight')]);
    // 20,000 values of ~600 bytes went through each; a Map promoted most of them
    expect(map).toBeGreaterThan(3 * 1024 * 1024);
    expect(inFlight).toBeLessThan(512 * 1024);
  }, 30_000);

  // Ids only grow: the store must not become an array as long as the largest id (V8 keeps sparse
  // integer keys in a dictionary).
  it('holds no more after two million ids than after none', async () => {
    expect((await churn('long')).heapGrewBytes).toBeLessThan(4 * 1024 * 1024);
  }, 30_000);
});
