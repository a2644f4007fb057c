import type { SqlConnection, TableDescription, TableRef } from './types';

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

const MAX_ENTRIES = 500;

/** Briefly cached schema introspection (successes only), so structured queries stay cheap. */
export class SchemaCache {
  private readonly tables = new Map<string, Entry<TableRef[]>>();
  private readonly described = new Map<string, Entry<TableDescription>>();

  constructor(
    private readonly connection: SqlConnection,
    private readonly ttlMs = 5000,
  ) {}

  private cached<T>(map: Map<string, Entry<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = map.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    if (map.size >= MAX_ENTRIES) map.clear();
    const value = load();
    map.set(key, { at: now, value });
    value.catch(() => {
      if (map.get(key)?.value === value) map.delete(key);
    });
    return value;
  }

  listTables(schema?: string): Promise<TableRef[]> {
    return this.cached(this.tables, schema ?? '', () => this.connection.listTables({ schema }));
  }

  describe(table: string, schema?: string): Promise<TableDescription> {
    return this.cached(this.described, `${schema ?? ''}\u0000${table}`, () => this.connection.describeTable(table, schema));
  }

  invalidate(): void {
    this.tables.clear();
    this.described.clear();
  }
}
