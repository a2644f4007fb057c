/**
 * Progressive discovery (MCP_DISCOVERY=meta, issue 30 part 2), on the fleet's real catalog (every
 * built service's own tool definitions, test/support/fleet-catalog.ts) behind two gateways, one in
 * each mode:
 * - tokens a client receives before its first call: the first tools/list page (2026-07-28) in full
 *   mode vs meta mode, and meta mode's list + one search + one describe; counted with gpt-tokenizer's
 *   o200k_base (the GPT-4o/GPT-5 encoding);
 * - search quality on bench/data/discovery-intents.json (what a user wants -> the tools that do it,
 *   written from the docs): recall@1, recall@3, MRR for hybrid, lexical-only and embedder-only
 *   ranking, overall and per split (dev intents were looked at while tuning, held-out ones were not);
 * - search latency with synthetic tools added to the real catalog up to 5,000 (index build time,
 *   search_tools in process and over HTTP), and recall at that size.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { Pool } from 'undici';
import { z } from 'zod';
import { createServiceApp, defineTool, type RunningServer, type ToolDefinition } from '@mcp-fleet/kit';
import { serve, testLogger } from '@mcp-fleet/testing';
import { createApp, type Gateway } from '../../services/mega-orchestrator/src/http/app';
import { configSchema } from '../../services/mega-orchestrator/src/core/config';
import type { Ranking } from '../../services/mega-orchestrator/src/core/discovery/search-index';
import { startFleetCatalog } from '../../test/support/fleet-catalog';
import { markdownTable, percentile, REPO_ROOT } from '../lib';

interface Intent {
  id: number;
  query: string;
  expected: string[];
  split: 'dev' | 'held-out';
}

const TARGET_TOOLS = 5000;
const SYNTHETIC_SERVICES = 10;

/** Words for synthetic tools: plausible operations on plausible things, so they compete with the real ones. */
const VERBS =
  'get list create update delete sync export import scan archive render schedule approve rotate merge tag index fetch post audit'.split(
    ' ',
  );
const NOUNS = (
  'invoice customer ticket order shipment report dashboard alert metric pipeline build release artifact container cluster node ' +
  'policy role user group calendar event contact lead campaign asset document page comment issue sprint board card budget'
).split(' ');

function syntheticTools(service: number, count: number): ToolDefinition[] {
  return Array.from({ length: count }, (_, i) => {
    const verb = VERBS[(i * 7 + service) % VERBS.length];
    const noun = NOUNS[(i * 13 + service * 3) % NOUNS.length];
    const other = NOUNS[(i * 5 + 11) % NOUNS.length];
    return defineTool({
      name: `${verb}_${noun}_${service}_${i}`,
      description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun} of the ${other} workspace in the synthetic system ${service}. Paginated; at most 500 items per page.`,
      input: z
        .object({
          [`${noun}_id`]: z.string().max(100).describe(`The ${noun}'s id.`),
          limit: z.number().int().min(1).max(500).optional().describe('Items per page.'),
        })
        .strict(),
      annotations: { readOnlyHint: verb === 'get' || verb === 'list' },
      handler: () => ({ ok: true }),
    });
  });
}

const tokens = (text: string) => encode(text).length;

async function gateway(dataDir: string, services: { id: string; url: string }[], discovery: 'full' | 'meta'): Promise<Gateway> {
  const gw = createApp({
    config: configSchema.parse({
      DATA_DIR: fs.mkdtempSync(path.join(dataDir, `gw-${discovery}-`)),
      LOG_LEVEL: 'error',
      HEALTH_POLL_MS: '600000',
      STDIO_SERVERS: 'false',
      MCP_DISCOVERY: discovery,
    }),
    logger: testLogger('gateway'),
    services,
    autoStart: false,
  });
  await gw.refresh();
  return gw;
}

/** One 2026-07-28 JSON-RPC request; the body as the client receives it. */
async function rpc(pool: Pool, method: string, params: Record<string, unknown>, name?: string): Promise<string> {
  const res = await pool.request({
    method: 'POST',
    path: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} answered ${res.statusCode}: ${text.slice(0, 200)}`);
  return text;
}

/** The downstream's own name of a listed name (`<service>__<tool>` or plain). */
const toolOf = (name: string, service: string) => (name.startsWith(`${service}__`) ? name.slice(service.length + 2) : name);

async function quality(gw: Gateway, intents: Intent[], ranking: Ranking) {
  const ranks: { split: string; rank: number }[] = [];
  for (const intent of intents) {
    const answer = await gw.ctx.discovery!.answer(
      gw.registry.catalog,
      'search_tools',
      { query: intent.query, limit: 10 },
      undefined,
      ranking,
    );
    const results = ('value' in answer ? answer.value.results : []) as { name: string; service: string }[];
    ranks.push({ split: intent.split, rank: results.findIndex((r) => intent.expected.includes(toolOf(r.name, r.service))) + 1 });
  }
  const score = (rows: { rank: number }[]) => ({
    n: rows.length,
    recallAt1: round3(rows.filter((r) => r.rank === 1).length / rows.length),
    recallAt3: round3(rows.filter((r) => r.rank >= 1 && r.rank <= 3).length / rows.length),
    mrr: round3(rows.reduce((s, r) => s + (r.rank ? 1 / r.rank : 0), 0) / rows.length),
  });
  return {
    ranking,
    all: score(ranks),
    dev: score(ranks.filter((r) => r.split === 'dev')),
    heldOut: score(ranks.filter((r) => r.split === 'held-out')),
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const ms = (x: number) => Math.round(x * 1000) / 1000;

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const intents = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'bench/data/discovery-intents.json'), 'utf8')) as { intents: Intent[] })
    .intents;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-discovery-'));
  const fleet = await startFleetCatalog();
  const closers: (() => Promise<unknown>)[] = [() => fleet.close()];
  try {
    // --- tokens before the first call, and search quality, on the real catalog
    const full = await gateway(dataDir, fleet.downstreams, 'full');
    const meta = await gateway(dataDir, fleet.downstreams, 'meta');
    closers.push(
      () => full.close(),
      () => meta.close(),
    );
    const fullServer = await serve(full.app);
    const metaServer = await serve(meta.app);
    closers.push(
      () => fullServer.stop(),
      () => metaServer.stop(),
    );
    const fullPool = new Pool(fullServer.url, { connections: 1 });
    const metaPool = new Pool(metaServer.url, { connections: 1 });
    closers.push(
      () => fullPool.close(),
      () => metaPool.close(),
    );
    const fullList = await rpc(fullPool, 'tools/list', {});
    const metaList = await rpc(metaPool, 'tools/list', {});
    const search = await rpc(
      metaPool,
      'tools/call',
      { name: 'search_tools', arguments: { query: 'show me the contents of README' } },
      'search_tools',
    );
    const describe = await rpc(metaPool, 'tools/call', { name: 'describe_tool', arguments: { name: 'file_read' } }, 'describe_tool');
    const catalogTools = full.registry.catalog.entries.length;
    const tokensOut = {
      tokenizer: 'gpt-tokenizer o200k_base',
      catalogTools,
      fullList: { bytes: Buffer.byteLength(fullList), tokens: tokens(fullList) },
      metaList: { bytes: Buffer.byteLength(metaList), tokens: tokens(metaList) },
      metaListSearchDescribe: { tokens: tokens(metaList) + tokens(search) + tokens(describe) },
    };
    const reduction = round3(1 - tokensOut.metaList.tokens / tokensOut.fullList.tokens);
    const reductionWithSearch = round3(1 - tokensOut.metaListSearchDescribe.tokens / tokensOut.fullList.tokens);
    const qualities: Awaited<ReturnType<typeof quality>>[] = [];
    for (const ranking of ['hybrid', 'lexical', 'embedding'] as const) qualities.push(await quality(meta, intents, ranking));

    // --- 5,000 tools: the real catalog plus synthetic services
    const perService = Math.ceil((TARGET_TOOLS - catalogTools) / SYNTHETIC_SERVICES);
    const synthetic: { id: string; url: string }[] = [];
    for (let s = 0; s < SYNTHETIC_SERVICES; s++) {
      const app = createServiceApp({
        service: `synthetic-${s}`,
        config: { BODY_LIMIT: '1mb', TOOL_TIMEOUT_MS: 10_000 },
        logger: testLogger(`synthetic-${s}`),
        tools: syntheticTools(s, perService),
        defaultMetrics: false,
      });
      const server: RunningServer = await serve(app.app);
      closers.push(
        () => server.stop(),
        () => app.close(),
      );
      synthetic.push({ id: `synthetic-${s}`, url: server.url });
    }
    const big = await gateway(dataDir, [...fleet.downstreams, ...synthetic], 'meta');
    closers.push(() => big.close());
    const bigTools = big.registry.catalog.entries.length;
    // the index is built when the catalog changes; this times one build of it (a fresh Discovery)
    const { Discovery } = await import('../../services/mega-orchestrator/src/core/discovery');
    const t0 = performance.now();
    new Discovery({ logger: testLogger('bench') }).prepare(big.registry.catalog);
    const buildMs = performance.now() - t0;
    const inProcess: number[] = [];
    const until = performance.now() + Math.max(1000, Math.min(options.durationMs, 5000));
    for (let i = 0; performance.now() < until; i++) {
      const q = intents[i % intents.length].query;
      const s0 = performance.now();
      await big.ctx.discovery!.answer(big.registry.catalog, 'search_tools', { query: q });
      inProcess.push(performance.now() - s0);
    }
    const bigServer = await serve(big.app);
    closers.push(() => bigServer.stop());
    const bigPool = new Pool(bigServer.url, { connections: 1 });
    closers.push(() => bigPool.close());
    const overHttp: number[] = [];
    const httpUntil = performance.now() + Math.max(1000, Math.min(options.durationMs, 5000));
    for (let i = 0; performance.now() < httpUntil; i++) {
      const s0 = performance.now();
      await rpc(bigPool, 'tools/call', { name: 'search_tools', arguments: { query: intents[i % intents.length].query } }, 'search_tools');
      overHttp.push(performance.now() - s0);
    }
    const stats = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return { n: xs.length, p50Ms: ms(percentile(sorted, 50)), p90Ms: ms(percentile(sorted, 90)), p99Ms: ms(percentile(sorted, 99)) };
    };
    const atScale = {
      tools: bigTools,
      indexBuildMs: Math.round(buildMs),
      searchInProcess: stats(inProcess),
      searchOverHttp: stats(overHttp),
    };
    const bigQuality = await quality(big, intents, 'hybrid');

    const json = {
      tokens: { ...tokensOut, reduction, reductionWithSearchAndDescribe: reductionWithSearch },
      quality: qualities,
      atScale: { ...atScale, quality: bigQuality },
    };
    const q = (r: (typeof qualities)[number]['all']) => [r.recallAt1, r.recallAt3, r.mrr];
    const markdown = [
      '## discovery: progressive tool discovery (MCP_DISCOVERY=meta)',
      '',
      `Real catalog: ${catalogTools} tools. Tokens counted with gpt-tokenizer (o200k_base) over the JSON-RPC answers as a 2026-07-28 client receives them.`,
      '',
      markdownTable(
        ['before the first call', 'bytes', 'tokens'],
        [
          ['full mode: tools/list (whole catalog, one page)', tokensOut.fullList.bytes, tokensOut.fullList.tokens],
          ['meta mode: tools/list (3 meta-tools)', tokensOut.metaList.bytes, tokensOut.metaList.tokens],
          ['meta mode: tools/list + one search_tools + one describe_tool', '', tokensOut.metaListSearchDescribe.tokens],
        ],
      ),
      '',
      `Fewer tokens: ${(reduction * 100).toFixed(1)}% (list alone), ${(reductionWithSearch * 100).toFixed(1)}% (list, one search, one describe).`,
      '',
      `Search quality on ${intents.length} labelled intents (bench/data/discovery-intents.json; a hit is any expected tool; dev = looked at while tuning, held-out = not):`,
      '',
      markdownTable(
        ['ranking', 'recall@1', 'recall@3', 'MRR', 'recall@3 dev', 'recall@3 held-out', 'MRR held-out'],
        qualities.map((r) => [r.ranking, ...q(r.all), r.dev.recallAt3, r.heldOut.recallAt3, r.heldOut.mrr]),
      ),
      '',
      `At ${bigTools} tools (the real catalog + ${SYNTHETIC_SERVICES} synthetic services): index built in ${atScale.indexBuildMs} ms (once per catalog change).`,
      '',
      markdownTable(
        ['search_tools', 'n', 'p50 ms', 'p90 ms', 'p99 ms'],
        [
          [
            'in process (Discovery.answer)',
            atScale.searchInProcess.n,
            atScale.searchInProcess.p50Ms,
            atScale.searchInProcess.p90Ms,
            atScale.searchInProcess.p99Ms,
          ],
          [
            'over HTTP (2026-07-28 tools/call, concurrency 1)',
            atScale.searchOverHttp.n,
            atScale.searchOverHttp.p50Ms,
            atScale.searchOverHttp.p90Ms,
            atScale.searchOverHttp.p99Ms,
          ],
        ],
      ),
      '',
      `Hybrid quality at ${bigTools} tools: recall@1 ${bigQuality.all.recallAt1}, recall@3 ${bigQuality.all.recallAt3}, MRR ${bigQuality.all.mrr}.`,
    ].join('\n');
    return { json, markdown };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
