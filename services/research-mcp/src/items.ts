/** A research result, whatever its source, and the dedup/rank rules that merge them. */
export type SourceKind = 'academic' | 'news' | 'encyclopedia' | 'web';

export interface Item {
  title: string;
  /** The item's own URL (its source page). */
  url: string;
  source: string;
  kind: SourceKind;
  snippet?: string;
  authors?: string[];
  /** ISO date (or year) when known. */
  published?: string;
  doi?: string;
  /** Other sources that returned the same item (same DOI or URL). */
  alsoIn?: string[];
  score?: number;
}

const TRACKING = /^(utm_|fbclid$|gclid$|mc_cid$|mc_eid$|ref$|ref_src$)/;

/** Lower-case host without www., no fragment, no tracking parameters, no trailing slash, arXiv versions folded. */
export function normalizeUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.hash = '';
    u.protocol = 'https:';
    u.hostname = u.hostname.toLowerCase().replace(/^www\./, '');
    if (u.port === '443' || u.port === '80') u.port = '';
    for (const k of [...u.searchParams.keys()]) if (TRACKING.test(k)) u.searchParams.delete(k);
    u.searchParams.sort();
    let path = u.pathname.replace(/\/+$/, '');
    if (u.hostname === 'arxiv.org') path = path.replace(/^\/pdf\//, '/abs/').replace(/v\d+(\.pdf)?$/, '');
    if (u.hostname === 'doi.org' || u.hostname === 'dx.doi.org') return `doi:${decodeURIComponent(path.slice(1)).toLowerCase()}`;
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${path}${u.search}`;
  } catch {
    return raw.trim().toLowerCase();
  }
}

export function normalizeDoi(raw: string | undefined | null): string | undefined {
  if (!raw) return undefined;
  const m = /10\.\d{4,9}\/\S+/.exec(decodeURIComponent(raw));
  return m ? m[0].toLowerCase().replace(/[.,;]+$/, '') : undefined;
}

export function terms(text: string): string[] {
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((t) => t.length > 1),
    ),
  ];
}

/**
 * Merge duplicates (same DOI, else same normalised URL; the first seen is kept and the others are
 * named in `alsoIn`), then rank: query terms in the title weigh 3, in the snippet 1, normalised by
 * the number of terms; each source's own order adds up to 0.5; being found by several sources adds
 * 0.25 each. Stable for equal scores.
 */
export function mergeAndRank(query: string, lists: Item[][], limit: number): Item[] {
  const q = terms(query);
  const byKey = new Map<string, Item>();
  const order: Item[] = [];
  const rankBonus = new Map<Item, number>();
  for (const list of lists) {
    list.forEach((item, i) => {
      const keys = [item.doi ? `doi:${item.doi}` : undefined, `url:${normalizeUrl(item.url)}`].filter(Boolean) as string[];
      const existing = keys.map((k) => byKey.get(k)).find(Boolean);
      const bonus = 0.5 / (i + 1);
      if (existing) {
        if (existing.source !== item.source && !existing.alsoIn?.includes(item.source))
          existing.alsoIn = [...(existing.alsoIn ?? []), item.source];
        existing.doi ??= item.doi;
        existing.snippet ??= item.snippet;
        existing.published ??= item.published;
        rankBonus.set(existing, Math.max(rankBonus.get(existing) ?? 0, bonus));
        for (const k of keys) byKey.set(k, existing);
        return;
      }
      const copy = { ...item };
      for (const k of keys) byKey.set(k, copy);
      order.push(copy);
      rankBonus.set(copy, bonus);
    });
  }
  for (const item of order) {
    const title = new Set(terms(item.title));
    const snippet = new Set(terms(item.snippet ?? ''));
    const match = q.length ? q.reduce((s, t) => s + (title.has(t) ? 3 : 0) + (snippet.has(t) ? 1 : 0), 0) / (q.length * 4) : 0;
    item.score = Math.round((match + (rankBonus.get(item) ?? 0) + 0.25 * (item.alsoIn?.length ?? 0)) * 1000) / 1000;
  }
  return order
    .map((item, i) => ({ item, i }))
    .sort((a, b) => b.item.score! - a.item.score! || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.item);
}

/** Plain text from a snippet that may hold HTML (search highlights, feed descriptions). */
export function plainText(html: string | undefined, max = 500): string | undefined {
  if (!html) return undefined;
  const text = html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
