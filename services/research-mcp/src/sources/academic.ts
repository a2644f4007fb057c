/** arXiv (Atom), Crossref and OpenAlex (JSON): the academic sources. */
import { normalizeDoi, plainText, type Item } from '../items';
import { asArray, withQuery, xmlText, type Source } from './types';
import { parseXml } from './xml';

export const arxiv: Source = {
  name: 'arxiv',
  kind: 'academic',
  async search({ fetcher, config, signal }, q) {
    const words = q.query.split(/\s+/).filter(Boolean).slice(0, 20);
    const url = withQuery(config.ARXIV_URL, '', {
      search_query: words.map((w) => `all:${w.replace(/[^\p{L}\p{N}.-]/gu, '')}`).join(' AND '),
      start: 0,
      max_results: q.limit,
    });
    const res = await fetcher.get('arxiv', url, signal);
    const feed = (parseXml('arxiv', res.text).feed ?? {}) as Record<string, unknown>;
    const items: Item[] = [];
    for (const e of asArray(feed.entry as Record<string, unknown>[])) {
      const id = xmlText(e.id);
      const title = plainText(xmlText(e.title), 300);
      if (!id || !title) continue;
      const published = xmlText(e.published);
      const year = published ? Number(published.slice(0, 4)) : undefined;
      if (year && ((q.yearFrom && year < q.yearFrom) || (q.yearTo && year > q.yearTo))) continue;
      const links = asArray(e.link as Record<string, string>[]);
      const page = links.find((l) => l['@_rel'] === 'alternate')?.['@_href'] ?? id;
      items.push({
        title,
        url: page,
        source: 'arxiv',
        kind: 'academic',
        snippet: plainText(xmlText(e.summary)),
        authors: asArray(e.author as Record<string, unknown>[])
          .map((a) => xmlText(a.name))
          .filter((n): n is string => Boolean(n)),
        published,
        doi: normalizeDoi(xmlText(e['arxiv:doi'])),
      });
    }
    return { items, cached: res.cached };
  },
};

interface CrossrefWork {
  DOI?: string;
  URL?: string;
  title?: string[];
  abstract?: string;
  author?: { given?: string; family?: string; name?: string }[];
  issued?: { 'date-parts'?: number[][] };
  'container-title'?: string[];
}

export const crossref: Source = {
  name: 'crossref',
  kind: 'academic',
  async search({ fetcher, config, signal }, q) {
    const filter = [q.yearFrom ? `from-pub-date:${q.yearFrom}` : '', q.yearTo ? `until-pub-date:${q.yearTo}` : '']
      .filter(Boolean)
      .join(',');
    const url = withQuery(config.CROSSREF_URL, '/works', {
      query: q.query,
      rows: q.limit,
      filter: filter || undefined,
      select: 'DOI,URL,title,abstract,author,issued,container-title',
      mailto: config.CROSSREF_MAILTO,
    });
    const { body, cached } = await fetcher.json<{ message?: { items?: CrossrefWork[] } }>('crossref', url, signal);
    const items: Item[] = [];
    for (const w of body.message?.items ?? []) {
      const title = plainText(w.title?.[0], 300);
      const doi = normalizeDoi(w.DOI);
      if (!title || !(w.URL || doi)) continue;
      const parts = w.issued?.['date-parts']?.[0];
      items.push({
        title,
        url: w.URL ?? `https://doi.org/${doi}`,
        source: 'crossref',
        kind: 'academic',
        snippet: plainText(w.abstract) ?? w['container-title']?.[0],
        authors: (w.author ?? []).map((a) => a.name ?? [a.given, a.family].filter(Boolean).join(' ')).filter(Boolean),
        published: parts?.length ? parts.map((p, i) => (i ? String(p).padStart(2, '0') : String(p))).join('-') : undefined,
        doi,
      });
    }
    return { items, cached };
  },
};

interface OpenAlexWork {
  id?: string;
  doi?: string | null;
  display_name?: string;
  title?: string;
  publication_year?: number;
  publication_date?: string;
  primary_location?: { landing_page_url?: string | null } | null;
  authorships?: { author?: { display_name?: string } }[];
  abstract_inverted_index?: Record<string, number[]> | null;
}

/** OpenAlex ships abstracts as word → positions; put the words back in order. */
export function invertedAbstract(index: Record<string, number[]> | null | undefined): string | undefined {
  if (!index) return undefined;
  const words: string[] = [];
  for (const [word, positions] of Object.entries(index)) for (const p of positions) if (p < 5000) words[p] = word;
  return words.filter(Boolean).join(' ') || undefined;
}

export const openalex: Source = {
  name: 'openalex',
  kind: 'academic',
  async search({ fetcher, config, signal }, q) {
    const years = q.yearFrom || q.yearTo ? `publication_year:${q.yearFrom ?? ''}-${q.yearTo ?? ''}` : undefined;
    const url = withQuery(config.OPENALEX_URL, '/works', {
      search: q.query,
      'per-page': q.limit,
      filter: years,
      mailto: config.CROSSREF_MAILTO,
    });
    const { body, cached } = await fetcher.json<{ results?: OpenAlexWork[] }>('openalex', url, signal);
    const items: Item[] = [];
    for (const w of body.results ?? []) {
      const title = plainText(w.display_name ?? w.title, 300);
      const doi = normalizeDoi(w.doi ?? undefined);
      const url = w.primary_location?.landing_page_url ?? (doi ? `https://doi.org/${doi}` : w.id);
      if (!title || !url) continue;
      items.push({
        title,
        url,
        source: 'openalex',
        kind: 'academic',
        snippet: plainText(invertedAbstract(w.abstract_inverted_index)),
        authors: (w.authorships ?? []).map((a) => a.author?.display_name).filter((n): n is string => Boolean(n)),
        published: w.publication_date ?? (w.publication_year ? String(w.publication_year) : undefined),
        doi,
      });
    }
    return { items, cached };
  },
};
