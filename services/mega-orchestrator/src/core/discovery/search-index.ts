/**
 * Tool search over one catalog: BM25F over each tool's name, title, description, parameter names,
 * descriptions and enum values, and the fleet's embedder (cosine over the same text), fused into one
 * score. Built once per catalog (Discovery caches it); a search reads it and never writes.
 */
import { LocalEmbedder } from '@mcp-fleet/kit/embedder';
import { expandQuery, queryConcepts, terms, words } from './text';

/** One tool as search sees it (a listed tool; a virtual server may pass its renamed ones). */
export interface SearchableTool {
  /** The name a client calls. */
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  service: string;
  /** Other names of the same tool (its qualified name, when listed plain too). */
  alsoAs?: string[];
}

export type Ranking = 'hybrid' | 'lexical' | 'embedding';

export interface SearchHit {
  tool: SearchableTool;
  score: number;
}

export interface SearchOptions {
  limit: number;
  ranking?: Ranking;
  /** Only tools this accepts are ranked (a caller's scopes). */
  allow?: (tool: SearchableTool) => boolean;
  /** A remote embedder's vector of the query, when the index has remote vectors. */
  queryVector?: Float32Array;
}

/** The ranking's constants: field weights of BM25F, its k1 and b, the thesaurus weight, the lexical share of the hybrid. */
export const TUNING = {
  fields: { name: 6, title: 2, summary: 1, description: 1, params: 1, paramText: 0.3, service: 0.5 },
  // a high k1: a word met in a tool's name or first sentence keeps counting more than one met once in its parameters
  k1: 8,
  b: 0.75,
  /** Weight of a query word's thesaurus neighbours. */
  related: 0.7,
  /** Weight of the lexical score in the hybrid one (the embedder's is the rest). */
  lexicalShare: 0.55,
};
type Field = keyof typeof TUNING.fields;
/** Schema text read per tool: enough for every real parameter, bounded for a hostile schema. */
const MAX_SCHEMA_TEXT = 4000;

/** Parameter names, their descriptions and enum values, to a bounded depth and length. */
function schemaText(schema: unknown): { names: string[]; text: string[] } {
  const names: string[] = [];
  const text: string[] = [];
  let budget = MAX_SCHEMA_TEXT;
  const take = (into: string[], s: string) => {
    if (budget <= 0) return;
    const part = s.slice(0, budget);
    budget -= part.length;
    into.push(part);
  };
  const walk = (node: unknown, depth: number) => {
    if (depth > 3 || budget <= 0 || typeof node !== 'object' || node === null || Array.isArray(node)) return;
    const n = node as Record<string, unknown>;
    if (typeof n.description === 'string' && depth > 0) take(text, n.description);
    if (Array.isArray(n.enum)) for (const v of n.enum.slice(0, 50)) if (typeof v === 'string') take(names, v);
    if (typeof n.const === 'string') take(names, n.const);
    const props = n.properties;
    if (typeof props === 'object' && props !== null && !Array.isArray(props))
      for (const [key, sub] of Object.entries(props).slice(0, 100)) {
        take(names, key);
        walk(sub, depth + 1);
      }
    if (n.items) walk(n.items, depth + 1);
    for (const k of ['anyOf', 'oneOf', 'allOf'])
      if (Array.isArray(n[k])) for (const sub of (n[k] as unknown[]).slice(0, 20)) walk(sub, depth + 1);
  };
  walk(schema, 0);
  return { names, text };
}

/** The text of each field of a tool. */
function fieldsOf(tool: SearchableTool): Record<Field, string> {
  const { names, text } = schemaText(tool.inputSchema);
  return {
    name: tool.name,
    title: tool.title ?? '',
    // what a tool does is said first; the rest is how
    summary: oneLine(tool.description, 300),
    description: tool.description.slice(0, 8000),
    params: names.join(' '),
    paramText: text.join(' '),
    service: tool.service,
  };
}

/** What the embedder reads of a tool: its name's words, title, description and parameters. */
export function embeddingText(tool: SearchableTool): string {
  const f = fieldsOf(tool);
  return words(`${f.name} ${f.title} ${f.description} ${f.params}`).join(' ');
}

/** What the embedder reads of a query: its words and their thesaurus neighbours. */
export function queryEmbeddingText(query: string): string {
  return [...expandQuery(query).keys()].join(' ');
}

/** The first sentence of a description, at most `max` characters: the one line a search shows. */
export function oneLine(description: string, max = 160): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const first = end > 0 ? flat.slice(0, end + 1) : flat;
  return first.length <= max ? first : `${first.slice(0, max - 1).trimEnd()}…`;
}

// 1,024 dimensions: at 384 the hashed word and trigram features of a catalog collide enough to cost the
// embedder alone a tenth of its recall; a search still reads 5,000 vectors in a few milliseconds
const LOCAL_DIMENSIONS = 1024;
const local = new LocalEmbedder(LOCAL_DIMENSIONS);

/** The local embedder's vector of a text, or undefined when it has nothing to embed. */
export function localVector(text: string): Float32Array | undefined {
  try {
    return Float32Array.from(local.embedOne(text));
  } catch {
    return undefined; // no letters or digits
  }
}

/** The dot product of `b` with a vector whose only non-zero entries are at `at` with values `q` (a short query hashes to few). */
function sparseDot(at: Uint32Array, q: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < at.length; k++) s += q[k] * b[at[k]];
  return s;
}

function normalized(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
  return Float32Array.from(v, (x) => x * inv);
}

export class SearchIndex {
  readonly tools: readonly SearchableTool[];
  /** term -> [doc index, BM25F term frequency] pairs, flat. */
  private readonly postings = new Map<string, number[]>();
  /** Unit vectors of the local embedder, one per tool (undefined: nothing to embed). */
  private readonly localVectors: (Float32Array | undefined)[];
  /** The same vectors side by side, one row per tool (zeros: nothing to embed), read in one pass by a search. */
  private readonly localMatrix: Float32Array;
  /** Unit vectors of a remote embedder, once it answered for every tool. */
  private remoteVectors?: Float32Array[];

  constructor(tools: readonly SearchableTool[], cachedVectors?: (tool: SearchableTool, text: string) => Float32Array | undefined) {
    this.tools = tools;
    // BM25F: each field's term frequency normalised by that field's length against its average
    // (a long description does not dilute a match in the name), weighted, summed; saturated at search.
    const fieldTerms = tools.map((tool) => {
      const fields = fieldsOf(tool);
      return Object.fromEntries((Object.keys(TUNING.fields) as Field[]).map((f) => [f, terms(fields[f])])) as Record<Field, string[]>;
    });
    const avg = {} as Record<Field, number>;
    for (const f of Object.keys(TUNING.fields) as Field[])
      avg[f] = Math.max(1, fieldTerms.reduce((sum, d) => sum + d[f].length, 0) / Math.max(1, tools.length));
    const weighted = new Map<string, number>();
    fieldTerms.forEach((doc, i) => {
      weighted.clear();
      for (const f of Object.keys(TUNING.fields) as Field[]) {
        const list = doc[f];
        if (!list.length) continue;
        const scale = TUNING.fields[f] / (1 - TUNING.b + (TUNING.b * list.length) / avg[f]);
        for (const t of list) weighted.set(t, (weighted.get(t) ?? 0) + scale);
      }
      for (const [t, tf] of weighted) {
        const postings = this.postings.get(t);
        if (postings) postings.push(i, tf);
        else this.postings.set(t, [i, tf]);
      }
    });
    this.localVectors = tools.map((tool) => {
      const text = embeddingText(tool);
      return cachedVectors?.(tool, text) ?? localVector(text);
    });
    this.localMatrix = new Float32Array(tools.length * LOCAL_DIMENSIONS);
    this.localVectors.forEach((v, row) => {
      if (v?.length === LOCAL_DIMENSIONS) this.localMatrix.set(v, row * LOCAL_DIMENSIONS);
    });
  }

  /** The texts a remote embedder is asked for, in tool order. */
  embeddingTexts(): string[] {
    return this.tools.map(embeddingText);
  }

  /** Installs a remote embedder's vectors (one per tool, in order). */
  useRemoteVectors(vectors: ArrayLike<number>[]): void {
    if (vectors.length !== this.tools.length) throw new Error(`expected ${this.tools.length} vectors, got ${vectors.length}`);
    this.remoteVectors = vectors.map(normalized);
  }

  get hasRemoteVectors(): boolean {
    return this.remoteVectors !== undefined;
  }

  /** The local vector of tool `i` (reused by the next index when the tool is unchanged). */
  localVectorOf(i: number): Float32Array | undefined {
    return this.localVectors[i];
  }

  /** BM25F scores of every tool the query's words (or their neighbours: the best one per word) reach. */
  private lexical(query: string): Float64Array {
    const scores = new Float64Array(this.tools.length);
    const best = new Float64Array(this.tools.length);
    const n = this.tools.length;
    for (const concept of queryConcepts(query, TUNING.related)) {
      best.fill(0);
      for (const [term, weight] of concept.terms) {
        const list = this.postings.get(term);
        if (!list) continue;
        const df = list.length / 2;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        for (let i = 0; i < list.length; i += 2) {
          const tf = list[i + 1];
          const s = weight * idf * ((tf * (TUNING.k1 + 1)) / (tf + TUNING.k1));
          if (s > best[list[i]]) best[list[i]] = s;
        }
      }
      for (let d = 0; d < n; d++) scores[d] += best[d];
    }
    return scores;
  }

  /** Cosine of each tool with the query (remote vectors when given one, else the local embedder's). */
  private semantic(query: string, queryVector?: Float32Array): Float64Array {
    const scores = new Float64Array(this.tools.length);
    const remote = queryVector && this.remoteVectors;
    const q = remote ? normalized(queryVector) : localVector(queryEmbeddingText(query));
    if (!q) return scores;
    const at = Uint32Array.from(q.keys()).filter((j) => q[j] !== 0);
    const values = Float32Array.from(at, (j) => q[j]);
    if (!remote) {
      const m = this.localMatrix;
      for (let i = 0, base = 0; i < scores.length; i++, base += LOCAL_DIMENSIONS) {
        let dot = 0;
        for (let k = 0; k < at.length; k++) dot += values[k] * m[base + at[k]];
        if (dot > 0) scores[i] = dot;
      }
      return scores;
    }
    const vectors = this.remoteVectors!;
    for (let i = 0; i < vectors.length; i++) {
      const v = vectors[i];
      if (v.length === q.length) scores[i] = Math.max(0, sparseDot(at, values, v));
    }
    return scores;
  }

  search(query: string, options: SearchOptions): SearchHit[] {
    const ranking = options.ranking ?? 'hybrid';
    const lex = ranking === 'embedding' ? undefined : this.lexical(query);
    const sem = ranking === 'lexical' ? undefined : this.semantic(query, options.queryVector);
    const max = (a?: Float64Array) => (a ? a.reduce((m, x) => (x > m ? x : m), 0) : 0);
    const lexMax = max(lex);
    const semMax = max(sem);
    // the best `limit` only, kept in order as they come (no sort of every tool that scored)
    const top: SearchHit[] = [];
    const before = (a: SearchHit, b: SearchHit) => a.score > b.score || (a.score === b.score && a.tool.name < b.tool.name);
    for (let i = 0; i < this.tools.length; i++) {
      // each signal scaled to [0, 1] by this query's best, then mixed
      const l = lex && lexMax > 0 ? lex[i] / lexMax : 0;
      const s = sem && semMax > 0 ? sem[i] / semMax : 0;
      const score = ranking === 'lexical' ? l : ranking === 'embedding' ? s : TUNING.lexicalShare * l + (1 - TUNING.lexicalShare) * s;
      if (score <= 0 || (top.length >= options.limit && score < top[top.length - 1].score)) continue;
      const tool = this.tools[i];
      if (options.allow && !options.allow(tool)) continue;
      const hit = { tool, score };
      let at = top.length;
      while (at > 0 && before(hit, top[at - 1])) at--;
      top.splice(at, 0, hit);
      if (top.length > options.limit) top.pop();
    }
    return top;
  }
}
