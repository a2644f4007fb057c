/**
 * research-mcp against a local server speaking each source's real wire format: merged and ranked
 * results with their URLs, per-source failure reports, the cache and rate limit, feeds, the
 * domain view, structured results with and without a model, and hostile input.
 */
import request from 'supertest';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';
import { normalizeUrl } from '../src/items';
import { startSourceServer, type SourceServer } from './fixtures';

describe('research-mcp', () => {
  let src: SourceServer;
  let app: ReturnType<typeof createApp>;
  const build = (extra: Record<string, string> = {}) => {
    const u = src.url;
    const config = configSchema.parse({
      ...testConfig,
      DATA_DIR: '/tmp',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      ARXIV_URL: `${u}/arxiv/query`,
      CROSSREF_URL: `${u}/crossref`,
      OPENALEX_URL: `${u}/openalex`,
      WIKIPEDIA_URL: `${u}/wiki`,
      HN_URL: `${u}/hn`,
      SEARXNG_URL: `${u}/searx`,
      RESEARCH_FEEDS: `${u}/feed.xml`,
      RESEARCH_SOURCE_TIMEOUT_MS: '500',
      ...extra,
    });
    return createApp({ config, logger: testLogger('research-mcp') });
  };
  const hits = (path: string) => src.hits.filter((h) => h.path === path);

  beforeAll(async () => {
    src = await startSourceServer();
    app = build();
  });
  afterAll(async () => {
    await app.close();
    await src.stop();
  });
  beforeEach(() => {
    src.failing.clear();
    src.hanging.clear();
    src.llmMode = 'good';
  });

  it('lists its five tools, each with a documented schema', async () => {
    const res = await request(app.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'research_academic',
      'research_domain',
      'research_news',
      'research_query',
      'research_structured',
    ]);
    for (const t of res.body.tools)
      for (const p of Object.values(t.inputSchema.properties) as { description?: string }[]) expect(p.description).toBeTruthy();
  });

  it('merges the same paper from arXiv, Crossref and OpenAlex by DOI and ranks it first', async () => {
    const res = await request(app.app).post('/research/academic').send({ query: 'quantum error correction', yearFrom: 2020 }).expect(200);
    const { results, sources } = res.body.result;
    expect(sources.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([
      ['arxiv', true],
      ['crossref', true],
      ['openalex', true],
    ]);
    const top = results[0];
    expect(top).toMatchObject({
      title: 'Quantum Error Correction with Surface Codes',
      source: 'arxiv',
      doi: '10.1234/qec.2021',
      url: 'http://arxiv.org/abs/2101.00001v2',
    });
    expect(top.alsoIn.sort()).toEqual(['crossref', 'openalex']);
    expect(top.authors).toEqual(['Ada Lovelace', 'Alan Turing']);
    // the year filter: the 2019 arXiv paper is left out, and the range went to the APIs
    expect(results.some((r: { title: string }) => r.title.startsWith('Classical'))).toBe(false);
    expect(hits('/crossref/works').at(-1)!.query.get('filter')).toBe('from-pub-date:2020');
    expect(hits('/openalex/works').at(-1)!.query.get('filter')).toBe('publication_year:2020-');
    expect(hits('/arxiv/query').at(-1)!.query.get('search_query')).toBe('all:quantum AND all:error AND all:correction');
    expect(results.every((r: { url: string }) => /^https?:\/\//.test(r.url))).toBe(true);
  });

  it('answers with the sources that work when one fails or hangs, naming each failure', async () => {
    src.failing.add('/crossref/works');
    src.hanging.add('/openalex/works');
    const started = Date.now();
    const res = await request(app.app).post('/research/search').send({ query: 'quantum surface codes', sources: 20 }).expect(200);
    expect(Date.now() - started).toBeLessThan(3000);
    const byName = Object.fromEntries(res.body.result.sources.map((s: { name: string }) => [s.name, s]));
    expect(byName.crossref).toMatchObject({ ok: false, code: 'UPSTREAM_ERROR', error: expect.stringMatching(/HTTP 500/) });
    expect(byName.openalex).toMatchObject({ ok: false, code: 'TIMEOUT' });
    expect(byName.arxiv.ok && byName.wikipedia.ok && byName.hackernews.ok && byName.searxng.ok).toBe(true);
    expect(byName[`feed:${new URL(src.url).host}`]).toMatchObject({ ok: true, count: 2 }); // two items hold "quantum"
    const urls = res.body.result.results.map((r: { url: string }) => normalizeUrl(r.url));
    expect(new Set(urls).size).toBe(urls.length);
    // the HN link and the SearxNG result are the same page once tracking parameters go
    const sim = res.body.result.results.find((r: { url: string }) => r.url.includes('sim.example'));
    expect(sim.alsoIn).toEqual(['searxng']);
  });

  it('serves a repeated request from its TTL cache and rate-limits each source', async () => {
    const before = hits('/wiki/w/rest.php/v1/search/page').length;
    const first = await request(app.app)
      .post('/tools/research_query')
      .send({ query: 'cache me', kinds: ['encyclopedia'] })
      .expect(200);
    const second = await request(app.app)
      .post('/tools/research_query')
      .send({ query: 'cache me', kinds: ['encyclopedia'] })
      .expect(200);
    expect(first.body.result.sources[0]).toMatchObject({ name: 'wikipedia', cached: false });
    expect(second.body.result.sources[0]).toMatchObject({ name: 'wikipedia', cached: true });
    expect(hits('/wiki/w/rest.php/v1/search/page').length).toBe(before + 1);

    const limited = build({ RESEARCH_RATE_PER_MIN: '1' });
    try {
      await request(limited.app)
        .post('/tools/research_query')
        .send({ query: 'one', only: ['wikipedia'] })
        .expect(200);
      const over = await request(limited.app)
        .post('/tools/research_query')
        .send({ query: 'two', only: ['wikipedia'] })
        .expect(200);
      expect(over.body.result.sources[0]).toMatchObject({
        ok: false,
        code: 'RATE_LIMITED',
        error: expect.stringMatching(/try again in \d+ s/),
      });
    } finally {
      await limited.close();
    }
  });

  it('reads news from Hacker News and RSS/Atom feeds, newer than `since`, and refuses a feed at a private address', async () => {
    const res = await request(app.app)
      .post('/research/news')
      .send({ query: 'quantum', feeds: [`${src.url}/atom.xml`, 'http://10.1.2.3/feed.xml'], since: '2026-01-01' })
      .expect(200);
    const titles = res.body.result.results.map((r: { title: string }) => r.title);
    expect(titles).toEqual(
      expect.arrayContaining(['Quantum computer breaks record', 'Error correction & you', 'Show HN: A surface code simulator']),
    );
    expect(titles).not.toContain('Gardening tips'); // no query term
    expect(titles).not.toContain('Old quantum story'); // before `since`
    expect(hits('/hn/search').at(-1)!.query.get('numericFilters')).toBe(`created_at_i>${Date.parse('2026-01-01') / 1000}`);
    const refused = res.body.result.sources.find((s: { name: string }) => s.name === 'feed:10.1.2.3');
    expect(refused).toMatchObject({ ok: false, code: 'FORBIDDEN', error: expect.stringMatching(/private/) });
    const rssItem = res.body.result.results.find((r: { title: string }) => r.title === 'Quantum computer breaks record');
    expect(rssItem).toMatchObject({
      url: `${src.url}/news/1`,
      snippet: 'A quantum error correction milestone.',
      published: '2026-11-16T09:00:00.000Z',
    });

    const latest = await request(app.app).post('/research/news').send({}).expect(200);
    expect(latest.body.result.results).toHaveLength(3); // every item of the configured feed, no HN without a query
    const notFeed = await request(app.app)
      .post('/research/news')
      .send({ feeds: [`${src.url}/not-a-feed.xml`] })
      .expect(200);
    expect(notFeed.body.result.sources.find((s: { name: string; ok: boolean }) => !s.ok).error).toMatch(/not an RSS or Atom feed/);
  });

  it('researches a domain: its home page, the feed it announces, HN links to it and web results from it', async () => {
    const res = await request(app.app)
      .post('/research/domain')
      .send({ domain: `${src.url}/site/` })
      .expect(200);
    const { site, results, sources } = res.body.result;
    expect(site).toMatchObject({ title: 'Example Site & Co', description: 'We build quantum things.', feeds: [`${src.url}/feed.xml`] });
    expect(results.map((r: { url: string }) => r.url)).toEqual(expect.arrayContaining([`${src.url}/news/1`, `${src.url}/news/2`]));
    const hn = hits('/hn/search').at(-1)!;
    expect(hn.query.get('query')).toBe('127.0.0.1');
    expect(hn.query.get('restrictSearchableAttributes')).toBe('url');
    expect(hits('/searx/search').at(-1)!.query.get('q')).toBe('site:127.0.0.1');
    expect(sources.every((s: { ok: boolean }) => s.ok)).toBe(true);
    const bad = await request(app.app).post('/research/domain').send({ domain: 'not a host' }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('builds a structured document extractively, each finding citing a result with its URL', async () => {
    const res = await request(app.app)
      .post('/research/structured')
      .send({ question: 'How do surface codes help quantum error correction?' })
      .expect(200);
    const doc = res.body.result;
    expect(doc.method).toBe('extractive');
    expect(doc.question).toBe('How do surface codes help quantum error correction?');
    expect(doc.findings.length).toBeGreaterThan(1);
    const urls = new Set(doc.results.map((r: { url: string }) => r.url));
    for (const f of doc.findings) {
      expect(f.statement.length).toBeGreaterThan(10);
      expect(f.citations.length).toBeGreaterThan(0);
      for (const c of f.citations) expect(urls.has(c.url)).toBe(true);
    }
  });

  it('builds it with the configured model, dropping uncited claims, and falls back when the model answers no JSON', async () => {
    const withModel = build({ LLM_BASE_URL: `${src.url}/llm`, LLM_API_KEY: 'k-123', LLM_MODEL: 'tiny' });
    try {
      const res = await request(withModel.app)
        .post('/research/structured')
        .send({ question: 'surface codes', only: ['arxiv', 'crossref'] })
        .expect(200);
      const doc = res.body.result;
      expect(doc).toMatchObject({ method: 'model', model: 'tiny' });
      expect(doc.findings).toHaveLength(1);
      expect(doc.findings[0].citations.map((c: { url: string }) => c.url)).toEqual([doc.results[0].url, doc.results[1].url]);
      const call = hits('/llm/chat/completions').at(-1)!;
      expect(JSON.parse(call.body)).toMatchObject({ model: 'tiny', response_format: { type: 'json_object' } });
      expect(call.body).toContain('[1] ');

      src.llmMode = 'bad';
      const fallback = await request(withModel.app)
        .post('/research/structured')
        .send({ question: 'surface codes quantum', only: ['arxiv'] })
        .expect(200);
      expect(fallback.body.result).toMatchObject({ method: 'extractive', modelError: expect.stringMatching(/extractive/) });
    } finally {
      await withModel.close();
    }
  });

  it.each([
    ['/research/search', {}],
    ['/research/search', { query: '' }],
    ['/research/search', { query: 'x', sources: 51 }],
    ['/research/academic', { query: 'x', yearFrom: 2022, yearTo: 2020 }],
    ['/research/news', { feeds: ['ftp://example.com/feed'] }],
    ['/research/news', { feeds: ['https://user:pw@example.com/feed'] }],
    ['/research/search', { query: 'x', kinds: ['gossip'] }],
    ['/research/search', { query: 'x', extra: 1 }],
  ])('refuses %s %j with VALIDATION_ERROR', async (path, body) => {
    const res = await request(app.app).post(path).send(body).expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
  });

  it('says in /health which sources are configured', async () => {
    const res = await request(app.app).get('/health').expect(200);
    expect(JSON.stringify(res.body)).toMatch(/searxng/);
    expect(JSON.stringify(res.body)).toMatch(/extractive/);
  });
});
