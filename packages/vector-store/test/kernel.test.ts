import { simdAvailable, strideFor, VectorMatrix } from '../src/kernel';

function reference(rows: number[][], q: number[], metric: 'dot' | 'l2'): number[] {
  return rows.map((r) => r.reduce((s, x, i) => s + (metric === 'dot' ? x * q[i] : (x - q[i]) ** 2), 0));
}

describe('VectorMatrix scoring kernels', () => {
  it('compiles the WASM SIMD kernel on this Node', () => {
    expect(simdAvailable()).toBe(true);
  });

  it('pads rows to a multiple of 8 floats', () => {
    expect([1, 8, 9, 13, 384].map(strideFor)).toEqual([8, 8, 16, 16, 384]);
  });

  describe.each([true, false])('simd=%p', (simd) => {
    it.each([1, 3, 13, 384])('matches a double-precision reference for %i dimensions, across growth and row moves', (dim) => {
      let seed = dim * 7919;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648 - 0.5;
      };
      const m = new VectorMatrix(dim, 1, { simd });
      const rows = Array.from({ length: 40 }, () => Array.from({ length: dim }, () => Math.fround(random())));
      rows.forEach((r, i) => {
        m.reserve(i + 1);
        m.setRow(i, new Float32Array(r));
      });
      m.copyRow(39, 0);
      rows[0] = rows[39];
      const q = Array.from({ length: dim }, () => Math.fround(random()));
      for (const metric of ['dot', 'l2'] as const) {
        const got = Array.from(m.score(new Float32Array(q), 39, metric));
        const want = reference(rows.slice(0, 39), q, metric);
        got.forEach((g, i) => expect(g).toBeCloseTo(want[i], 3));
      }
      expect(Array.from(m.getRow(5))).toEqual(rows[5]);
    });
  });
});
