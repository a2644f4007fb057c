// One tokenizer and one cosine for embedding and text search, shared through the kit.
export { cosine, tokenize } from '@mcp-fleet/kit/embedder';

export const round = (x: number, digits = 6) => Number(x.toFixed(digits));
