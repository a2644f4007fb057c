/**
 * Progressive discovery (MCP_DISCOVERY=meta): clients see three meta-tools instead of the catalog
 * (meta-tools.ts). Each catalog gets its search index once, when it changes (prepare), never per
 * call; a search reads it, filtered by what the caller may call. call_tool is not answered here: it
 * hands back the plain tools/call it stands for, which the caller's path then runs like any other.
 *
 * Nothing here is specific to the gateway's whole catalog: a virtual server passes its own
 * catalog (its chosen, renamed tools) and gets the same three tools over it.
 */
import { AppError, parseOrThrow, type Logger, type ToolAnnotations } from '@mcp-fleet/kit';
import type { Embedder } from '@mcp-fleet/kit/embedder';
import { allows, type Principal } from '../../auth/auth';
import type { Catalog, CatalogEntry } from '../catalog';
import {
  CALL_TOOL,
  callInput,
  DESCRIBE_TOOL,
  describeInput,
  META_TOOL_LISTING,
  META_TOOL_NAMES,
  SEARCH_TOOLS,
  searchInput,
} from './meta-tools';
import { oneLine, queryEmbeddingText, SearchIndex, type Ranking, type SearchableTool } from './search-index';

export interface DiscoveryOptions {
  logger: Logger;
  /** An OpenAI-compatible embedder (DISCOVERY_EMBEDDINGS_URL); the fleet's local embedder when absent. */
  remote?: Embedder;
  /** Names to leave out of search and describe (tools the MCP listing leaves out). */
  hidden?: (catalog: Catalog, name: string) => boolean;
}

/** What a meta-tool answers: its value, or the plain tools/call it stands for (call_tool). */
export type MetaAnswer = { value: Record<string, unknown> } | { call: { name: string; arguments: Record<string, unknown> } };

interface Built {
  index: SearchIndex;
  /** The catalog entry of each indexed tool, in index order. */
  entries: CatalogEntry[];
  /** Remote vectors being fetched for this catalog. */
  remote?: Promise<void>;
}

/** Vectors kept across catalogs by the text they embed, so a catalog change embeds only new tools. */
const MAX_CACHED_VECTORS = 50_000;
const REMOTE_BATCH = 64;

export class Discovery {
  private readonly built = new WeakMap<Catalog, Built>();
  private readonly localVectors = new Map<string, Float32Array>();
  private readonly remoteVectors = new Map<string, Float32Array>();

  constructor(private readonly options: DiscoveryOptions) {}

  /** What a client sees in tools/list. */
  get tools(): typeof META_TOOL_LISTING {
    return META_TOOL_LISTING;
  }

  isMetaTool(name: unknown): boolean {
    return typeof name === 'string' && META_TOOL_NAMES.has(name);
  }

  /** The catalog's index, built now if it is not yet (the registry's catalog event builds it first). */
  prepare(catalog: Catalog): Built {
    let built = this.built.get(catalog);
    if (built) return built;
    // one document per tool of a service: a tool listed plain and qualified is found once, by its plain name
    const seen = new Map<string, SearchableTool>();
    const entries: CatalogEntry[] = [];
    for (const e of catalog.entries) {
      if (this.options.hidden?.(catalog, e.name)) continue;
      const key = `${e.service}\u0000${e.tool.name}`;
      const doc = seen.get(key);
      if (doc) {
        (doc.alsoAs ??= []).push(e.name);
        continue;
      }
      const tool: SearchableTool = {
        name: e.name,
        ...(e.tool.title ? { title: e.tool.title } : {}),
        description: e.tool.description,
        inputSchema: e.tool.inputSchema,
        service: e.service,
      };
      seen.set(key, tool);
      entries.push(e);
    }
    if (this.localVectors.size > MAX_CACHED_VECTORS) this.localVectors.clear();
    const index = new SearchIndex([...seen.values()], (_tool, text) => this.localVectors.get(text));
    index.embeddingTexts().forEach((text, i) => {
      const v = index.localVectorOf(i);
      if (v) this.localVectors.set(text, v);
    });
    built = { index, entries };
    this.built.set(catalog, built);
    if (this.options.remote) built.remote = this.embedRemotely(built, this.options.remote);
    return built;
  }

  /** Fetches the remote embedder's vectors of the tools it has not embedded yet; until then search uses the local ones. */
  private async embedRemotely(built: Built, remote: Embedder): Promise<void> {
    const texts = built.index.embeddingTexts();
    const missing = [...new Set(texts.filter((t) => !this.remoteVectors.has(t)))];
    try {
      for (let i = 0; i < missing.length; i += REMOTE_BATCH) {
        const batch = missing.slice(i, i + REMOTE_BATCH);
        const vectors = await remote.embed(batch);
        batch.forEach((t, j) => this.remoteVectors.set(t, Float32Array.from(vectors[j])));
      }
      if (this.remoteVectors.size > MAX_CACHED_VECTORS) {
        const keep = new Set(texts);
        for (const t of this.remoteVectors.keys()) if (!keep.has(t)) this.remoteVectors.delete(t);
      }
      built.index.useRemoteVectors(texts.map((t) => this.remoteVectors.get(t)!));
    } catch (err) {
      this.options.logger.warn('tool discovery: the embeddings endpoint failed; searching with the local embedder', {
        err: (err as Error).message,
      });
    }
  }

  /** Waits for the remote vectors of this catalog (tests, benchmarks). */
  async ready(catalog: Catalog): Promise<void> {
    await this.prepare(catalog).remote;
  }

  /**
   * Answers one meta-tool call (`name` is one of META_TOOL_NAMES); bad arguments and unknown tools
   * are AppErrors for the caller's path to answer in its form.
   */
  async answer(catalog: Catalog, name: string, args: unknown, principal?: Principal, ranking?: Ranking): Promise<MetaAnswer> {
    if (name === CALL_TOOL) {
      const a = parseOrThrow(callInput, args ?? {}, 'call_tool arguments; send {"name": "<tool>", "arguments": {...}}');
      return { call: { name: a.name, arguments: a.arguments ?? {} } };
    }
    const built = this.prepare(catalog);
    const allow = principal
      ? (i: number) => allows(principal, built.entries[i].service, built.entries[i].tool.annotations as ToolAnnotations)
      : undefined;
    if (name === SEARCH_TOOLS) {
      const a = parseOrThrow(searchInput, args ?? {}, 'search_tools arguments; send {"query": "what you want to do"}');
      return { value: await this.search(built, a.query, a.limit, allow, ranking) };
    }
    if (name === DESCRIBE_TOOL) {
      const a = parseOrThrow(describeInput, args ?? {}, 'describe_tool arguments; send {"name": "<tool>"}');
      return { value: await this.describe(catalog, built, a.name, allow) };
    }
    throw new AppError('UNKNOWN_TOOL', `No meta-tool named "${name.slice(0, 100)}".`);
  }

  private async search(
    built: Built,
    query: string,
    limit: number,
    allow: ((i: number) => boolean) | undefined,
    ranking: Ranking = 'hybrid',
  ): Promise<Record<string, unknown>> {
    const { index } = built;
    let queryVector: Float32Array | undefined;
    let embedder = 'local';
    if (ranking !== 'lexical' && this.options.remote && index.hasRemoteVectors) {
      try {
        queryVector = Float32Array.from((await this.options.remote.embed([queryEmbeddingText(query)]))[0]);
        embedder = this.options.remote.kind;
      } catch (err) {
        embedder = 'local (the embeddings endpoint failed)';
        this.options.logger.warn('tool discovery: the embeddings endpoint failed for a query; ranked with the local embedder', {
          err: (err as Error).message,
        });
      }
    }
    const position = new Map(index.tools.map((t, i) => [t, i]));
    const hits = index.search(query, { limit, ranking, queryVector, allow: allow ? (t) => allow(position.get(t)!) : undefined });
    return {
      query,
      results: hits.map((h) => ({
        name: h.tool.name,
        description: oneLine(h.tool.description),
        score: Math.round(h.score * 1000) / 1000,
        service: h.tool.service,
      })),
      ranking: ranking === 'lexical' ? 'lexical' : `${ranking} (bm25 + ${embedder} embedder)`,
      next: 'describe_tool {"name"} shows a tool\'s arguments; call_tool {"name", "arguments"} runs it.',
    };
  }

  private async describe(
    catalog: Catalog,
    built: Built,
    name: string,
    allow: ((i: number) => boolean) | undefined,
  ): Promise<Record<string, unknown>> {
    const entry = catalog.byName.get(name);
    const i = entry ? built.entries.findIndex((e) => e.service === entry.service && e.tool.name === entry.tool.name) : -1;
    if (!entry || i < 0 || (allow && !allow(i))) {
      const near = built.index.search(name, { limit: 3, allow: allow ? (t) => allow(built.index.tools.indexOf(t)) : undefined });
      throw new AppError(
        'UNKNOWN_TOOL',
        `No tool named "${name.slice(0, 100)}" here${near.length ? `; did you mean ${near.map((h) => h.tool.name).join(', ')}?` : '.'} search_tools finds tools by what they do.`,
      );
    }
    const doc = built.index.tools[i];
    return {
      name,
      ...(entry.tool.title ? { title: entry.tool.title } : {}),
      description: entry.tool.description,
      inputSchema: entry.tool.inputSchema,
      annotations: entry.tool.annotations,
      service: entry.service,
      ...(doc.alsoAs?.length || doc.name !== name ? { alsoAs: [doc.name, ...(doc.alsoAs ?? [])].filter((n) => n !== name) } : {}),
    };
  }
}
