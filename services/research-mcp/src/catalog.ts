/** Which sources serve which kind of research. */
import type { Config } from './config';
import type { SourceKind } from './items';
import { arxiv, crossref, openalex } from './sources/academic';
import type { Source } from './sources/types';
import { feedSource, hackernews, searxng, wikipedia } from './sources/web';

export const ACADEMIC = [arxiv, crossref, openalex] as const;
export const ACADEMIC_NAMES = ['arxiv', 'crossref', 'openalex'] as const;
export const KINDS = ['academic', 'news', 'encyclopedia', 'web'] as const satisfies readonly SourceKind[];
export const SOURCE_NAMES = ['arxiv', 'crossref', 'openalex', 'wikipedia', 'hackernews', 'feeds', 'searxng'] as const;

/** The sources of the given kinds (all by default); `feeds` are the configured ones plus any extra. */
export function sourcesFor(config: Config, kinds: readonly SourceKind[] = KINDS, extraFeeds: string[] = []): Source[] {
  const feeds = [...new Set([...config.RESEARCH_FEEDS, ...extraFeeds])].map(feedSource);
  const all: Source[] = [...ACADEMIC, wikipedia, hackernews, ...feeds, searxng];
  return all.filter((s) => kinds.includes(s.kind));
}

export function byName(sources: Source[], names: readonly string[] | undefined): Source[] {
  if (!names?.length) return sources;
  return sources.filter((s) => names.includes(s.name) || (names.includes('feeds') && s.name.startsWith('feed:')));
}
