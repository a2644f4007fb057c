import type { Config } from '../config';
import type { Fetcher } from '../fetcher';
import type { Item, SourceKind } from '../items';

export interface SourceQuery {
  query: string;
  /** Results wanted from this source. */
  limit: number;
  yearFrom?: number;
  yearTo?: number;
  /** Only items published after this time (news). */
  since?: Date;
}

export interface SourceContext {
  fetcher: Fetcher;
  config: Config;
  signal: AbortSignal;
}

export interface SourceAnswer {
  items: Item[];
  cached: boolean;
}

export interface Source {
  name: string;
  kind: SourceKind;
  /** Why it cannot run (not configured), or undefined when it can. */
  unavailable?: (config: Config) => string | undefined;
  search(ctx: SourceContext, q: SourceQuery): Promise<SourceAnswer>;
}

export const asArray = <T>(v: T | T[] | undefined | null): T[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** Text of an XML node that may be a string, a number or {#text}. */
export function xmlText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim() || undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object' && '#text' in (v as object)) return xmlText((v as { '#text': unknown })['#text']);
  return undefined;
}

export function withQuery(base: string, path: string, params: Record<string, string | number | undefined>): string {
  const u = new URL(base.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
  return u.toString();
}
