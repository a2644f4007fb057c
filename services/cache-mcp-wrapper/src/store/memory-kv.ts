import { AppError } from '@mcp-fleet/kit';
import { compileGlob } from './glob';
import {
  badCursor,
  decodeScanCursor,
  encodeScanCursor,
  INTEGER_TEXT,
  notInteger,
  outOfRange,
  type KvStore,
  type ScanPage,
  type SetOptions,
} from './kv-store';

interface Entry {
  value: string;
  /** Epoch ms; undefined = never expires. */
  expiresAt?: number;
}

export interface MemoryKvOptions {
  maxBytes: number;
  sweepIntervalMs: number;
  now?: () => number;
}

/** The in-process store: Redis string semantics, TTLs expired lazily and by a periodic sweep. */
export class MemoryKvStore implements KvStore {
  readonly backend = 'embedded' as const;
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: MemoryKvOptions) {
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => this.sweep(), options.sweepIntervalMs);
    this.timer.unref();
  }

  /** Drops every expired entry; returns how many. */
  sweep(): number {
    const now = this.now();
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) {
        this.remove(key, entry);
        dropped++;
      }
    }
    return dropped;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.remove(key, entry);
      return undefined;
    }
    return entry;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= key.length + entry.value.length;
  }

  private write(key: string, value: string, expiresAt: number | undefined): void {
    const old = this.entries.get(key);
    const delta = key.length + value.length - (old ? key.length + old.value.length : 0);
    if (delta > 0 && this.bytes + delta > this.options.maxBytes) throw this.full();
    this.entries.set(key, { value, expiresAt });
    this.bytes += delta;
  }

  private full(): AppError {
    return new AppError(
      'PAYLOAD_TOO_LARGE',
      `The embedded cache is full (${this.options.maxBytes} bytes); delete keys, give them TTLs, raise CACHE_EMBEDDED_MAX_BYTES or set REDIS_URL.`,
    );
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async mget(keys: string[]): Promise<(string | null)[]> {
    return keys.map((k) => this.live(k)?.value ?? null);
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const current = this.live(key);
    if (options.nx && current) return false;
    if (options.xx && !current) return false;
    const expiresAt = options.ttlMs !== undefined ? this.now() + options.ttlMs : options.keepTtl ? current?.expiresAt : undefined;
    this.write(key, value, expiresAt);
    return true;
  }

  async mset(entries: [string, string][], ttlMs?: number): Promise<void> {
    // All or nothing: check the budget for the whole batch before writing any of it.
    let delta = 0;
    for (const [k, v] of new Map(entries)) {
      const old = this.live(k);
      delta += k.length + v.length - (old ? k.length + old.value.length : 0);
    }
    if (delta > 0 && this.bytes + delta > this.options.maxBytes) throw this.full();
    const expiresAt = ttlMs !== undefined ? this.now() + ttlMs : undefined;
    for (const [k, v] of entries) this.write(k, v, expiresAt);
  }

  async del(keys: string[]): Promise<number> {
    let n = 0;
    for (const key of new Set(keys)) {
      const entry = this.live(key);
      if (entry) {
        this.remove(key, entry);
        n++;
      }
    }
    return n;
  }

  async exists(key: string): Promise<boolean> {
    return this.live(key) !== undefined;
  }

  async pexpire(key: string, ttlMs: number): Promise<boolean> {
    const entry = this.live(key);
    if (!entry) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  async pttl(key: string): Promise<number> {
    const entry = this.live(key);
    if (!entry) return -2;
    if (entry.expiresAt === undefined) return -1;
    return Math.max(0, entry.expiresAt - this.now());
  }

  async incrBy(key: string, by: number): Promise<number> {
    const entry = this.live(key);
    if (entry && !INTEGER_TEXT.test(entry.value)) throw notInteger();
    const next = (entry ? Number(entry.value) : 0) + by;
    if (!Number.isSafeInteger(next) || (entry && !Number.isSafeInteger(Number(entry.value)))) throw outOfRange();
    this.write(key, String(next), entry?.expiresAt);
    return next;
  }

  async scan(pattern: string, limit: number, cursor?: string): Promise<ScanPage> {
    let after: string | undefined;
    if (cursor !== undefined) {
      const c = decodeScanCursor(cursor);
      if (typeof c.k !== 'string') throw badCursor();
      after = c.k;
    }
    const glob = compileGlob(pattern);
    const found: string[] = [];
    for (const key of [...this.entries.keys()]) {
      if ((after === undefined || key > after) && glob.match(key) && this.live(key)) found.push(key);
    }
    found.sort();
    const keys = found.slice(0, limit);
    return found.length > limit ? { keys, cursor: encodeScanCursor({ k: keys[keys.length - 1] }) } : { keys };
  }

  async ping(): Promise<Record<string, unknown>> {
    return { backend: this.backend, keys: this.entries.size, approxBytes: this.bytes, maxBytes: this.options.maxBytes };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
    this.bytes = 0;
  }
}
