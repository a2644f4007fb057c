import { baseEnvShape, csv, int, loadConfig, ms, optionalUrl, unsetIfEmpty, type Env } from '@mcp-fleet/kit';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { z } from 'zod';

export const SERVICE_ID = 'research-mcp';

const baseUrl = (fallback: string, what: string) => z.url().default(fallback).describe(`Base URL of ${what}.`);

export const configSchema = z.object({
  ...baseEnvShape,
  ...outboundEnvShape,
  ARXIV_URL: baseUrl('https://export.arxiv.org/api/query', "arXiv's Atom query API"),
  CROSSREF_URL: baseUrl('https://api.crossref.org', 'the Crossref REST API'),
  CROSSREF_MAILTO: unsetIfEmpty(z.email()).describe("Contact address sent to Crossref and OpenAlex (their 'polite pool'); optional."),
  OPENALEX_URL: baseUrl('https://api.openalex.org', 'the OpenAlex API'),
  WIKIPEDIA_URL: baseUrl('https://en.wikipedia.org', 'a Wikipedia (MediaWiki REST API); another language: https://de.wikipedia.org'),
  HN_URL: baseUrl('https://hn.algolia.com/api/v1', 'the Hacker News Algolia search API'),
  SEARXNG_URL: optionalUrl().describe(
    'A SearxNG instance for general web search (JSON format enabled); unset: web search is not configured.',
  ),
  RESEARCH_FEEDS: csv([]).describe('RSS or Atom feed URLs searched by research_news besides the ones a caller names.'),
  LLM_BASE_URL: optionalUrl().describe(
    'OpenAI-compatible chat-completions base URL (e.g. http://localhost:8080/v1) for model-written structured results; unset: extractive.',
  ),
  LLM_API_KEY: unsetIfEmpty(z.string()).describe('Bearer token for LLM_BASE_URL, if it needs one (never logged).'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('Model name sent to the chat-completions endpoint.'),
  RESEARCH_SOURCE_TIMEOUT_MS: ms(8000, 100, 120_000).describe(
    'Time limit of one source request; a source past it is reported failed while the others answer.',
  ),
  RESEARCH_LLM_TIMEOUT_MS: ms(60_000, 1000, 300_000).describe('Time limit of one model request.'),
  RESEARCH_CACHE_TTL_MS: ms(300_000, 0, 86_400_000).describe('How long a source answer is reused for the same request (0: no cache).'),
  RESEARCH_CACHE_ENTRIES: int(1000, 0, 100_000).describe('Source answers kept in the cache at most.'),
  RESEARCH_RATE_PER_MIN: int(60, 1, 100_000).describe(
    'Requests per minute each source is sent at most (a token bucket per source); over it the source is skipped and reported.',
  ),
  RESEARCH_MAX_RESPONSE_BYTES: int(4 * 1024 * 1024, 1024, 50 * 1024 * 1024).describe('Largest answer read from one source.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
