/**
 * Brute-force scoring kernels. The vectors of a collection live in one WebAssembly memory (row
 * stride padded to a multiple of 8 floats with zeros, which change neither dot products nor
 * distances); a hand-assembled WASM SIMD module scores every row in one call, writing float32
 * scores into the same memory. Without WASM SIMD the same layout is scored by plain JS loops.
 */

const ZERO_V128 = new Array<number>(16).fill(0);
const SIMD = 0xfd;
const V128_LOAD = (offset: number) => [SIMD, 0x00, 0x04, offset];
const F32X4_ADD = [SIMD, 0xe4, 0x01];
const F32X4_SUB = [SIMD, 0xe5, 0x01];
const F32X4_MUL = [SIMD, 0xe6, 0x01];
const EXTRACT = (lane: number) => [SIMD, 0x1f, lane];
const GET = (i: number) => [0x20, i];
const SET = (i: number) => [0x21, i];
const TEE = (i: number) => [0x22, i];
const I32_CONST = (v: number) => [0x41, v]; // values below 64 only
const I32_ADD = [0x6a];
const I32_GE_U = [0x4f];
const F32_ADD = [0x92];

// params: 0 data, 1 query, 2 rows, 3 strideBytes, 4 out; locals: 5 row, 6 i, 7 acc, 8 acc2, 9 diff
function body(term: (offset: number) => number[]): number[] {
  // prettier-ignore
  const code = [
    0x02, 0x40, 0x03, 0x40,
    ...GET(5), ...GET(2), ...I32_GE_U, 0x0d, 0x01,
    SIMD, 0x0c, ...ZERO_V128, ...SET(7),
    SIMD, 0x0c, ...ZERO_V128, ...SET(8),
    ...I32_CONST(0), ...SET(6),
    0x02, 0x40, 0x03, 0x40,
    ...GET(6), ...GET(3), ...I32_GE_U, 0x0d, 0x01,
    ...GET(7), ...term(0), ...F32X4_ADD, ...SET(7),
    ...GET(8), ...term(16), ...F32X4_ADD, ...SET(8),
    ...GET(6), ...I32_CONST(32), ...I32_ADD, ...SET(6),
    0x0c, 0x00, 0x0b, 0x0b,
    ...GET(4),
    ...GET(7), ...GET(8), ...F32X4_ADD, ...TEE(7),
    ...EXTRACT(0), ...GET(7), ...EXTRACT(1), ...F32_ADD, ...GET(7), ...EXTRACT(2), ...F32_ADD, ...GET(7), ...EXTRACT(3), ...F32_ADD,
    0x38, 0x02, 0x00,
    ...GET(4), ...I32_CONST(4), ...I32_ADD, ...SET(4),
    ...GET(0), ...GET(3), ...I32_ADD, ...SET(0),
    ...GET(5), ...I32_CONST(1), ...I32_ADD, ...SET(5),
    0x0c, 0x00, 0x0b, 0x0b,
    0x0b,
  ];
  const locals = [0x02, 0x02, 0x7f, 0x03, 0x7b];
  return [...uleb(locals.length + code.length), ...locals, ...code];
}

const load = (offset: number) => [
  ...GET(0),
  ...GET(6),
  ...I32_ADD,
  ...V128_LOAD(offset),
  ...GET(1),
  ...GET(6),
  ...I32_ADD,
  ...V128_LOAD(offset),
];
const dotTerm = (offset: number) => [...load(offset), ...F32X4_MUL];
const l2Term = (offset: number) => [...load(offset), ...F32X4_SUB, ...TEE(9), ...GET(9), ...F32X4_MUL];

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];
const name = (s: string) => [s.length, ...Buffer.from(s, 'ascii')];

function moduleBytes(): Uint8Array {
  const dot = body(dotTerm);
  const l2 = body(l2Term);
  // prettier-ignore
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]),
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]),
    ...section(3, [0x02, 0x00, 0x00]),
    ...section(7, [0x02, ...name('dot'), 0x00, 0x00, ...name('l2'), 0x00, 0x01]),
    ...section(10, [0x02, ...dot, ...l2]),
  ]);
}

/** The few WebAssembly APIs used here (the project's TypeScript lib has no WebAssembly typings). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

type Kernel = (data: number, query: number, rows: number, strideBytes: number, out: number) => void;

let compiled: object | null | undefined;

function simdModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = new wasm.Module(moduleBytes());
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

export const PAGE = 65536;
/** wasm32 addresses 4 GiB; keep headroom for the query and score areas. */
export const MAX_MATRIX_BYTES = 3.5 * 1024 ** 3;

/** Row stride in floats: dimensions rounded up to a multiple of 8. */
export const strideFor = (dim: number) => Math.ceil(dim / 8) * 8;

/**
 * The vectors of one collection: rows [0, capacity) at offset 0, then a query row, then one float
 * of score per row. Growing the memory keeps row data in place.
 */
export class VectorMatrix {
  readonly stride: number;
  private memory: WasmMemory;
  private kernels: { dot: Kernel; l2: Kernel } | null;
  private view!: Float32Array;
  capacity = 0;

  constructor(
    readonly dim: number,
    capacity: number,
    options: { simd?: boolean } = {},
  ) {
    this.stride = strideFor(dim);
    this.memory = new wasm.Memory({ initial: 1, maximum: 65536 });
    const mod = options.simd === false ? null : simdModule();
    this.kernels = mod
      ? (new wasm.Instance(mod, { env: { memory: this.memory } }).exports as unknown as { dot: Kernel; l2: Kernel })
      : null;
    this.reserve(Math.max(capacity, 16));
  }

  get simd(): boolean {
    return this.kernels !== null;
  }

  private bytesFor(capacity: number): number {
    return capacity * this.stride * 4 + this.stride * 4 + capacity * 4;
  }

  /** Room for at least `rows` rows; RangeError when the memory cannot grow that far. */
  reserve(rows: number): void {
    if (rows <= this.capacity) {
      this.refresh();
      return;
    }
    const capacity = Math.max(rows, this.capacity * 2, 16);
    const need = this.bytesFor(capacity);
    if (capacity * this.stride * 4 > MAX_MATRIX_BYTES) throw new RangeError('vector matrix larger than the embedded store allows');
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / PAGE));
    this.capacity = capacity;
    this.refresh();
  }

  private refresh(): void {
    if (!this.view || this.view.buffer !== this.memory.buffer) this.view = new Float32Array(this.memory.buffer);
  }

  /** A live view over the whole memory (refreshed after growth). */
  floats(): Float32Array {
    this.refresh();
    return this.view;
  }

  setRow(row: number, v: Float32Array): void {
    this.floats().set(v, row * this.stride);
  }

  /** A row from its little-endian float32 bytes (as stored in SQLite). */
  setRowBytes(row: number, bytes: Uint8Array): void {
    this.floats();
    new Uint8Array(this.memory.buffer, row * this.stride * 4, bytes.byteLength).set(bytes);
  }

  getRow(row: number): Float32Array {
    const off = row * this.stride;
    return this.floats().slice(off, off + this.dim);
  }

  copyRow(from: number, to: number): void {
    this.floats().copyWithin(to * this.stride, from * this.stride, (from + 1) * this.stride);
  }

  /** Scores rows [0, rows): dot products or squared distances, as float32. */
  score(query: Float32Array, rows: number, metric: 'dot' | 'l2'): Float32Array {
    const f = this.floats();
    const queryOff = this.capacity * this.stride;
    const outOff = queryOff + this.stride;
    f.fill(0, queryOff, queryOff + this.stride);
    f.set(query, queryOff);
    if (this.kernels) {
      this.kernels[metric](0, queryOff * 4, rows, this.stride * 4, outOff * 4);
    } else {
      for (let r = 0; r < rows; r++)
        f[outOff + r] =
          metric === 'dot' ? dotAt(f, r * this.stride, f, queryOff, this.stride) : l2At(f, r * this.stride, queryOff, this.stride);
    }
    return f.subarray(outOff, outOff + rows);
  }
}

function dotAt(f: Float32Array, off: number, _q: Float32Array, qOff: number, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += f[off + i] * f[qOff + i];
  return s;
}

function l2At(f: Float32Array, off: number, qOff: number, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const d = f[off + i] - f[qOff + i];
    s += d * d;
  }
  return s;
}

/** For tests: whether the SIMD kernel compiled here. */
export const simdAvailable = (): boolean => simdModule() !== null;
