import { KeyedSerial } from '../src/serial';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedSerial', () => {
  it('runs the work of one key one at a time, in call order, and different keys side by side', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    const step = (key: string, n: number) =>
      serial.run(key, async () => {
        log.push(`${key}${n} start`);
        await tick();
        await tick();
        log.push(`${key}${n} end`);
        return `${key}${n}`;
      });
    const results = await Promise.all([step('a', 1), step('a', 2), step('b', 1)]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    // a2 starts only after a1 ended; b1 ran while a1 was running.
    expect(log.indexOf('a2 start')).toBeGreaterThan(log.indexOf('a1 end'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
  });

  it('keeps going after a failure, which reaches only its own caller', async () => {
    const serial = new KeyedSerial();
    const failed = serial.run('k', async () => {
      throw new Error('boom');
    });
    const next = serial.run('k', async () => 'after');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('after');
  });

  it('forgets a key once its queue is empty, and idle() waits for everything queued', async () => {
    const serial = new KeyedSerial();
    let done = 0;
    for (let i = 0; i < 5; i++)
      void serial.run(`k${i % 2}`, async () => {
        await tick();
        done++;
      });
    expect(serial.size).toBe(2);
    await serial.idle();
    expect(done).toBe(5);
    await tick();
    expect(serial.size).toBe(0);
  });
});
