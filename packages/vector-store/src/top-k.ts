/**
 * Bounded min-heap over (key, row): keeps the k largest keys; on equal keys the lower row (earlier
 * insert) wins, so results are deterministic.
 */
export class TopK {
  readonly keys: Float64Array;
  readonly rows: Int32Array;
  size = 0;

  constructor(readonly k: number) {
    this.keys = new Float64Array(k);
    this.rows = new Int32Array(k);
  }

  /** Worse = smaller key, or equal key with a larger row. */
  private worse(i: number, j: number): boolean {
    const a = this.keys[i];
    const b = this.keys[j];
    return a < b || (a === b && this.rows[i] > this.rows[j]);
  }

  /** The smallest key kept, or -Infinity while the heap is not full. */
  floor(): number {
    return this.size < this.k ? -Infinity : this.keys[0];
  }

  offer(key: number, row: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      this.keys[i] = key;
      this.rows[i] = row;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(i, p)) break;
        this.swap(i, p);
        i = p;
      }
      return;
    }
    const topKey = this.keys[0];
    if (key < topKey || (key === topKey && row > this.rows[0])) return;
    this.keys[0] = key;
    this.rows[0] = row;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.worse(l, m)) m = l;
      if (r < this.size && this.worse(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    const k = this.keys[i];
    this.keys[i] = this.keys[j];
    this.keys[j] = k;
    const r = this.rows[i];
    this.rows[i] = this.rows[j];
    this.rows[j] = r;
  }

  /** Best first. */
  sorted(): { key: number; row: number }[] {
    const out: { key: number; row: number }[] = [];
    for (let i = 0; i < this.size; i++) out.push({ key: this.keys[i], row: this.rows[i] });
    return out.sort((a, b) => b.key - a.key || a.row - b.row);
  }
}
