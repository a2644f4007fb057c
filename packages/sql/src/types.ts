export type SqlEngine = 'postgres' | 'sqlite';

/** A bound parameter: scalars everywhere; arrays only on PostgreSQL (e.g. `= ANY($1)`). */
export type SqlScalar = string | number | boolean | null;
export type SqlParam = SqlScalar | SqlScalar[];

export interface ColumnInfo {
  name: string;
  /** Engine type name (PostgreSQL: format_type; SQLite: declared type, else the value's storage class). */
  type: string;
}

export interface QueryOptions {
  /** Rows kept; one more is fetched to tell whether the result was cut. */
  maxRows?: number;
  /** Per-statement time limit (PostgreSQL statement_timeout; SQLite interrupt). */
  timeoutMs?: number;
  /** Serialized size budget for the rows (approximate JSON bytes). */
  maxBytes?: number;
  /** 'object' (default): rows keyed by column name; 'array': rows as arrays in column order. */
  rowMode?: 'object' | 'array';
  /** Aborting cancels the statement (best effort) and rejects with TIMEOUT. */
  signal?: AbortSignal;
}

export interface QueryResult {
  /** The statement's leading verb, upper case (SELECT, INSERT, ...). */
  command: string;
  columns: ColumnInfo[];
  rows: Record<string, unknown>[] | unknown[][];
  rowCount: number;
  /** Rows the statement inserted, updated or deleted (writes only). */
  rowsAffected?: number;
  truncated: boolean;
  /** Why the rows were cut: the row cap or the byte budget. */
  truncatedReason?: 'maxRows' | 'maxBytes';
  durationMs: number;
}

export interface TableRef {
  /** PostgreSQL schema; SQLite: always "main". */
  schema: string;
  name: string;
  type: 'table' | 'view';
}

export interface ColumnDescription {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  primaryKey: boolean;
  position: number;
}

export interface TableDescription extends TableRef {
  columns: ColumnDescription[];
  primaryKey: string[];
  indexes: { name: string; unique: boolean; columns: string[] }[];
  foreignKeys: { columns: string[]; references: { schema: string; table: string; columns: string[] } }[];
}

export interface PingResult {
  latencyMs: number;
  version: string;
}

export interface ConnectionStats {
  engine: SqlEngine;
  queries: number;
  errors: number;
  /** PostgreSQL pool counters. */
  pool?: { total: number; idle: number; waiting: number; max: number };
  /** SQLite file facts. */
  file?: { path: string; sizeBytes: number | null };
}

export interface ConnectionInfo {
  name: string;
  engine: SqlEngine;
  writable: boolean;
  /** Where it points, with any password replaced (never the secret). */
  target: string;
}

/** One named connection. Every method maps engine errors to AppError codes. */
export interface SqlConnection {
  readonly info: ConnectionInfo;
  query(sql: string, params?: SqlParam[], options?: QueryOptions): Promise<QueryResult>;
  listTables(options?: { schema?: string }): Promise<TableRef[]>;
  /** NOT_FOUND when the table does not exist. `schema` defaults to the search path (PostgreSQL) / "main". */
  describeTable(name: string, schema?: string): Promise<TableDescription>;
  ping(): Promise<PingResult>;
  stats(): ConnectionStats;
  close(): Promise<void>;
}
