import type { Logger } from '@mcp-fleet/kit';
import { OpenAIEmbedder } from '@mcp-fleet/kit/embedder';
import type { Config } from '../config';
import type { Catalog } from '../catalog';
import type { Registry } from '../registry';
import { Discovery } from './discovery';

export { Discovery, type MetaAnswer } from './discovery';
export { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOLS } from './meta-tools';

/**
 * MCP_DISCOVERY=meta: the gateway's Discovery, its index rebuilt whenever the catalog changes
 * (after the change is announced, off the request path). undefined in full mode, where it costs
 * nothing: the call paths test one field.
 */
export function createDiscovery(
  config: Config,
  logger: Logger,
  registry: Registry,
  /** A tool the MCP listing leaves out, which is not found either (the protocol layer says which: invalid x-mcp-header declarations). */
  hidden: (catalog: Catalog, name: string) => boolean,
): Discovery | undefined {
  if (config.MCP_DISCOVERY !== 'meta') return undefined;
  const remote = config.DISCOVERY_EMBEDDINGS_URL
    ? new OpenAIEmbedder({
        url: config.DISCOVERY_EMBEDDINGS_URL,
        model: config.DISCOVERY_EMBEDDINGS_MODEL,
        apiKey: config.DISCOVERY_EMBEDDINGS_API_KEY,
        timeoutMs: config.DISCOVERY_EMBEDDINGS_TIMEOUT_MS,
        variablePrefix: 'DISCOVERY_EMBEDDINGS',
      })
    : undefined;
  const discovery = new Discovery({
    logger,
    remote,
    hidden,
  });
  let pending = false;
  registry.on('catalog', () => {
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      discovery.prepare(registry.catalog);
    });
  });
  discovery.prepare(registry.catalog);
  logger.info('tool discovery: clients see search_tools, describe_tool and call_tool (MCP_DISCOVERY=meta)', {
    embedder: remote ? remote.describe() : { kind: 'local' },
  });
  return discovery;
}
