import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { OutboundClient, OutboundPolicy } from '@mcp-fleet/outbound';
import { SERVICE_ID, type Config } from './config';
import { Fetcher } from './fetcher';
import { createTools } from './tools';

export interface AppDeps {
  config: Config;
  logger: Logger;
  /** Overrides the outbound policy built from OUTBOUND_ALLOWLIST (tests inject a resolver). */
  policy?: OutboundPolicy;
}

/** Builds the app; never listens (server.ts does). */
export function createApp({ config, logger, policy }: AppDeps): ServiceApp {
  const client = new OutboundClient({
    policy: policy ?? OutboundPolicy.fromConfig(config),
    logger,
    userAgent: `${SERVICE_ID}/0.1 (mcp-fleet)`,
  });
  const fetcher = new Fetcher({
    client,
    logger,
    timeoutMs: config.RESEARCH_SOURCE_TIMEOUT_MS,
    ratePerMinute: config.RESEARCH_RATE_PER_MIN,
    cacheTtlMs: config.RESEARCH_CACHE_TTL_MS,
    cacheEntries: config.RESEARCH_CACHE_ENTRIES,
    maxResponseBytes: config.RESEARCH_MAX_RESPONSE_BYTES,
  });
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ config, fetcher, logger }),
    routes: (r) => {
      r.tool('post', '/research/search', 'research_query');
      r.tool('post', '/research/news', 'research_news');
      r.tool('post', '/research/academic', 'research_academic');
      r.tool('post', '/research/domain', 'research_domain');
      r.tool('post', '/research/structured', 'research_structured');
    },
    healthChecks: [
      {
        name: 'sources',
        required: false,
        check: async () => ({
          academic: ['arxiv', 'crossref', 'openalex'],
          news: ['hackernews', ...config.RESEARCH_FEEDS.map((f) => `feed ${f}`)],
          encyclopedia: ['wikipedia'],
          web: config.SEARXNG_URL ? ['searxng'] : 'not configured (SEARXNG_URL)',
          model: config.LLM_BASE_URL ? config.LLM_MODEL : 'not configured (LLM_BASE_URL): structured results are extractive',
        }),
      },
    ],
  });
}
