/**
 * Runs work one at a time per key, in call order: a read-modify-write under one key never
 * interleaves with another for the same key, while different keys run concurrently. A failed run
 * does not stop the ones queued behind it. Keys are forgotten once their queue is empty.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work); // a tail never rejects
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Resolves when everything queued so far has run. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }

  /** Keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }
}
