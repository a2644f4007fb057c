// The embedders live in the kit, shared with the gateway's tool discovery.
export {
  createEmbedder,
  LocalEmbedder,
  OpenAIEmbedder,
  type Embedder,
  type EmbedderConfig,
  type OpenAIEmbedderOptions,
} from '@mcp-fleet/kit/embedder';
