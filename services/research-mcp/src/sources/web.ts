/** Wikipedia, Hacker News, RSS/Atom feeds and SearxNG. */
import { AppError } from '@mcp-fleet/kit';
import { plainText, terms, type Item } from '../items';
import { asArray, withQuery, xmlText, type Source, type SourceContext, type SourceQuery } from './types';
import { parseXml } from './xml';

export const wikipedia: Source = {
  name: 'wikipedia',
  kind: 'encyclopedia',
  async search({ fetcher, config, signal }, q) {
    const url = withQuery(config.WIKIPEDIA_URL, '/w/rest.php/v1/search/page', { q: q.query, limit: Math.min(q.limit, 100) });
    const { body, cached } = await fetcher.json<{
      pages?: { key?: string; title?: string; excerpt?: string; description?: string | null }[];
    }>('wikipedia', url, signal);
    const base = config.WIKIPEDIA_URL.replace(/\/+$/, '');
    const items: Item[] = [];
    for (const p of body.pages ?? []) {
      if (!p.key || !p.title) continue;
      items.push({
        title: p.title,
        url: `${base}/wiki/${encodeURIComponent(p.key)}`,
        source: 'wikipedia',
        kind: 'encyclopedia',
        snippet: [p.description, plainText(p.excerpt)].filter(Boolean).join(': ') || undefined,
      });
    }
    return { items, cached };
  },
};

interface HnHit {
  objectID?: string;
  title?: string | null;
  url?: string | null;
  author?: string;
  points?: number;
  num_comments?: number;
  created_at?: string;
  story_text?: string | null;
}

export async function hnSearch(ctx: SourceContext, q: SourceQuery, extra: Record<string, string> = {}) {
  const url = withQuery(ctx.config.HN_URL, '/search', {
    query: q.query,
    tags: 'story',
    hitsPerPage: Math.min(q.limit, 100),
    numericFilters: q.since ? `created_at_i>${Math.floor(q.since.getTime() / 1000)}` : undefined,
    ...extra,
  });
  const { body, cached } = await ctx.fetcher.json<{ hits?: HnHit[] }>('hackernews', url, ctx.signal);
  const items: Item[] = [];
  for (const h of body.hits ?? []) {
    if (!h.objectID || !h.title) continue;
    const discussion = `https://news.ycombinator.com/item?id=${encodeURIComponent(h.objectID)}`;
    items.push({
      title: h.title,
      url: h.url || discussion,
      source: 'hackernews',
      kind: 'news',
      snippet:
        plainText(h.story_text ?? undefined) ?? `${h.points ?? 0} points, ${h.num_comments ?? 0} comments on Hacker News (${discussion})`,
      authors: h.author ? [h.author] : undefined,
      published: h.created_at,
    });
  }
  return { items, cached };
}

export const hackernews: Source = { name: 'hackernews', kind: 'news', search: (ctx, q) => hnSearch(ctx, q) };

/** A feed's host for its source name (the URL itself when it does not parse). */
function hostOf(feedUrl: string): string {
  try {
    return new URL(feedUrl).host;
  } catch {
    return feedUrl;
  }
}

/** Items of an RSS 2.0, RSS 1.0 (RDF) or Atom document. */
export function feedItems(xml: string, feedUrl: string): Item[] {
  const doc = parseXml(feedUrl, xml);
  const rss = doc.rss as { channel?: { item?: unknown; title?: unknown } } | undefined;
  const rdf = doc['rdf:RDF'] as { item?: unknown } | undefined;
  const atom = doc.feed as { entry?: unknown } | undefined;
  const host = hostOf(feedUrl);
  const out: Item[] = [];
  if (rss || rdf) {
    for (const it of asArray((rss?.channel?.item ?? rdf?.item) as Record<string, unknown>[])) {
      const title = plainText(xmlText(it.title), 300);
      const link = xmlText(it.link) ?? xmlText(it.guid);
      if (!title || !link) continue;
      out.push({
        title,
        url: new URL(link, feedUrl).toString(),
        source: `feed:${host}`,
        kind: 'news',
        snippet: plainText(xmlText(it.description) ?? xmlText(it['content:encoded'])),
        published: dateOf(xmlText(it.pubDate) ?? xmlText(it['dc:date'])),
        authors: [xmlText(it.author) ?? xmlText(it['dc:creator'])].filter((a): a is string => Boolean(a)),
      });
    }
  } else if (atom) {
    for (const e of asArray(atom.entry as Record<string, unknown>[])) {
      const title = plainText(xmlText(e.title), 300);
      const links = asArray(e.link as Record<string, string>[]);
      const href = (links.find((l) => !l['@_rel'] || l['@_rel'] === 'alternate') ?? links[0])?.['@_href'] ?? xmlText(e.id);
      if (!title || !href) continue;
      out.push({
        title,
        url: new URL(href, feedUrl).toString(),
        source: `feed:${host}`,
        kind: 'news',
        snippet: plainText(xmlText(e.summary) ?? xmlText(e.content)),
        published: dateOf(xmlText(e.published) ?? xmlText(e.updated)),
        authors: asArray(e.author as Record<string, unknown>[])
          .map((a) => xmlText(a.name))
          .filter((n): n is string => Boolean(n)),
      });
    }
  } else {
    throw new AppError('UPSTREAM_ERROR', `${host} is not an RSS or Atom feed.`);
  }
  return out;
}

function dateOf(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** One feed as a source: items whose title or text holds a query term (every item for an empty query). */
export function feedSource(feedUrl: string): Source {
  return {
    name: `feed:${hostOf(feedUrl)}`,
    kind: 'news',
    async search({ fetcher, signal }, q) {
      const res = await fetcher.get(`feed ${feedUrl}`, feedUrl, signal);
      const want = terms(q.query);
      const items = feedItems(res.text, feedUrl).filter((it) => {
        if (q.since && it.published && Date.parse(it.published) < q.since.getTime()) return false;
        if (!want.length) return true;
        const have = new Set(terms(`${it.title} ${it.snippet ?? ''}`));
        return want.some((t) => have.has(t));
      });
      return { items: items.slice(0, q.limit), cached: res.cached };
    },
  };
}

export const searxng: Source = {
  name: 'searxng',
  kind: 'web',
  unavailable: (config) =>
    config.SEARXNG_URL ? undefined : 'not configured: set SEARXNG_URL to a SearxNG instance with the JSON format enabled',
  async search({ fetcher, config, signal }, q) {
    const url = withQuery(config.SEARXNG_URL!, '/search', { q: q.query, format: 'json', pageno: 1 });
    const { body, cached } = await fetcher.json<{
      results?: { url?: string; title?: string; content?: string; engine?: string; publishedDate?: string | null }[];
    }>('searxng', url, signal);
    const items: Item[] = [];
    for (const r of (body.results ?? []).slice(0, q.limit)) {
      if (!r.url || !r.title) continue;
      items.push({
        title: plainText(r.title, 300)!,
        url: r.url,
        source: 'searxng',
        kind: 'web',
        snippet: plainText(r.content),
        published: r.publishedDate ?? undefined,
      });
    }
    return { items, cached };
  },
};
