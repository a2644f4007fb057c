import { AppError, defineTool, toAppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import { research } from '../engine';
import { plainText } from '../items';
import { hnSearch, feedSource, searxng, wikipedia } from '../sources/web';
import type { Source } from '../sources/types';
import { sourceContext, type ToolDeps } from './context';
import { limitField } from './shapes';

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/** A bare host name means https://host/; a full http(s) URL is used as the site's root as given. */
export function siteOf(domain: string): { host: string; root: URL } {
  if (/^https?:\/\//i.test(domain)) {
    const root = new URL(domain);
    return { host: root.hostname.toLowerCase().replace(/^www\./, ''), root };
  }
  const host = domain.toLowerCase().replace(/^www\./, '');
  if (!HOST.test(host))
    throw new AppError('VALIDATION_ERROR', `domain "${domain}" is not a host name such as example.com (or an http(s) URL).`);
  return { host, root: new URL(`https://${host}/`) };
}

const onSite = (host: string) => (url: string) => {
  try {
    const h = new URL(url).hostname.toLowerCase().replace(/^www\./, '');
    return h === host || h.endsWith(`.${host}`);
  } catch {
    return false;
  }
};

interface SiteFacts {
  url: string;
  title?: string;
  description?: string;
  feeds: string[];
  error?: string;
}

/** The site's home page: its title, description and the feeds it announces (<link rel="alternate">). */
async function readSite(deps: ToolDeps, root: URL, signal: AbortSignal): Promise<SiteFacts> {
  try {
    const res = await deps.fetcher.get('site', root.toString(), signal, { accept: 'text/html,application/xhtml+xml' });
    const html = res.text.slice(0, 512 * 1024);
    const attr = (tag: string, name: string) => new RegExp(`${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(tag)?.[1];
    const feeds: string[] = [];
    for (const m of html.matchAll(/<link\b[^>]*>/gi)) {
      const tag = m[0];
      if (!/rel\s*=\s*["'][^"']*alternate/i.test(tag)) continue;
      if (!/type\s*=\s*["']application\/(rss|atom)\+xml["']/i.test(tag)) continue;
      const href = attr(tag, 'href');
      if (href) feeds.push(new URL(href, root).toString());
    }
    const description = /<meta\b[^>]*name\s*=\s*["']description["'][^>]*>/i.exec(html)?.[0];
    return {
      url: root.toString(),
      title: plainText(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1], 300),
      description: description ? plainText(attr(description, 'content'), 500) : undefined,
      feeds: [...new Set(feeds)].slice(0, 5),
    };
  } catch (err) {
    return { url: root.toString(), feeds: [], error: toAppError(err).message };
  }
}

export const researchDomainTool = (deps: ToolDeps) =>
  defineTool({
    name: 'research_domain',
    title: 'Domain research',
    description:
      'What is known about a web domain (example.com, or a site root URL): its home page title and description, the items of the feeds it announces, ' +
      'Hacker News stories linking to it, web results from it (SearxNG, when configured) and Wikipedia articles about its name; optionally narrowed by a query. ' +
      'Results are merged and ranked, each with its URL; failed sources are listed in `sources`. Up to 100 results.',
    input: z
      .object({
        domain: z.string().trim().min(1).max(2048).describe('A host name such as example.com, or the site root as an http(s) URL.'),
        query: z.string().trim().max(500).default('').describe('Words to narrow the results (optional).'),
        limit: limitField(20),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ domain, query, limit }, ctx) => {
      const { host, root } = siteOf(domain);
      const site = await readSite(deps, root, ctx.signal);
      const inSite = onSite(host);
      const label = host.split('.').slice(-2, -1)[0] ?? host;
      const perSource = Math.min(50, limit);
      const sources: Source[] = [
        ...site.feeds.map(feedSource),
        {
          name: 'hackernews',
          kind: 'news',
          search: async (c, q) => {
            const res = await hnSearch(c, { ...q, query: host }, { restrictSearchableAttributes: 'url' });
            return { ...res, items: res.items.filter((i) => inSite(i.url)) };
          },
        },
        {
          ...searxng,
          search: async (c, q) => {
            const res = await searxng.search(c, { ...q, query: `site:${host} ${query}`.trim() });
            return { ...res, items: res.items.filter((i) => inSite(i.url)) };
          },
        },
        {
          ...wikipedia,
          search: (c, q) => wikipedia.search(c, { ...q, query: query ? `${label} ${query}` : label, limit: Math.min(5, q.limit) }),
        },
      ];
      const answer = await research(sources, sourceContext(deps, ctx.signal), { query, limit: perSource }, limit);
      return { domain: host, site, results: answer.items, sources: answer.sources, total: answer.total };
    },
  });
