/**
 * A local server speaking each source's real wire format (Atom for arXiv and feeds, RSS 2.0, JSON for
 * Crossref, OpenAlex, Wikipedia, Hacker News/Algolia, SearxNG and chat completions), with fixtures
 * made here. Records every request so tests can check what was asked.
 */
import type http from 'node:http';
import type { RunningServer } from '@mcp-fleet/kit';
import { serve } from '@mcp-fleet/testing';

export interface SourceServer extends RunningServer {
  hits: { path: string; query: URLSearchParams; body: string }[];
  /** Paths that answer 500 or hang, set by tests. */
  failing: Set<string>;
  hanging: Set<string>;
  llmMode: 'good' | 'bad';
}

const ARXIV = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title>arXiv Query</title>
  <entry>
    <id>http://arxiv.org/abs/2101.00001v2</id>
    <published>2021-01-04T10:00:00Z</published>
    <title>Quantum Error Correction with Surface Codes</title>
    <summary>We study quantum error correction. Surface codes tolerate high error rates &amp; scale well.</summary>
    <author><name>Ada Lovelace</name></author>
    <author><name>Alan Turing</name></author>
    <arxiv:doi>10.1234/QEC.2021</arxiv:doi>
    <link href="http://arxiv.org/abs/2101.00001v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2101.00001v2" rel="related" type="application/pdf"/>
  </entry>
  <entry>
    <id>http://arxiv.org/abs/1901.00002v1</id>
    <published>2019-01-02T10:00:00Z</published>
    <title>Classical Error Correction Revisited</title>
    <summary>An older look at classical codes.</summary>
    <author><name>Claude Shannon</name></author>
    <link href="http://arxiv.org/abs/1901.00002v1" rel="alternate" type="text/html"/>
  </entry>
</feed>`;

const CROSSREF = {
  status: 'ok',
  'message-type': 'work-list',
  message: {
    'total-results': 2,
    items: [
      {
        DOI: '10.1234/qec.2021',
        URL: 'https://doi.org/10.1234/qec.2021',
        title: ['Quantum Error Correction with Surface Codes'],
        author: [{ given: 'Ada', family: 'Lovelace' }],
        issued: { 'date-parts': [[2021, 3, 1]] },
        'container-title': ['Journal of Codes'],
        abstract: '<jats:p>Surface codes for quantum error correction.</jats:p>',
      },
      {
        DOI: '10.5555/other',
        URL: 'https://doi.org/10.5555/other',
        title: ['Quantum Annealing in Practice'],
        author: [{ name: 'The Annealing Group' }],
        issued: { 'date-parts': [[2022]] },
      },
    ],
  },
};

const OPENALEX = {
  meta: { count: 1 },
  results: [
    {
      id: 'https://openalex.org/W1',
      doi: 'https://doi.org/10.1234/QEC.2021',
      display_name: 'Quantum error correction with surface codes',
      publication_year: 2021,
      publication_date: '2021-03-01',
      primary_location: { landing_page_url: 'https://journal.example/qec' },
      authorships: [{ author: { display_name: 'Ada Lovelace' } }],
      abstract_inverted_index: { Surface: [0], codes: [1], correct: [2], quantum: [3], errors: [4] },
    },
  ],
};

const WIKI = {
  pages: [
    {
      id: 1,
      key: 'Quantum_error_correction',
      title: 'Quantum error correction',
      excerpt: '<span class="searchmatch">Quantum</span> error correction protects quantum information from errors.',
      description: 'Process in quantum computing',
    },
  ],
};

const HN = {
  hits: [
    {
      objectID: '111',
      title: 'Show HN: A surface code simulator',
      url: 'https://sim.example/surface?utm_source=hn',
      author: 'pg',
      points: 120,
      num_comments: 30,
      created_at: '2026-11-01T12:00:00Z',
    },
    {
      objectID: '112',
      title: 'Ask HN: Quantum error correction for beginners?',
      url: null,
      author: 'dang',
      points: 5,
      created_at: '2026-10-01T00:00:00Z',
    },
  ],
};

const SEARX = {
  query: 'q',
  results: [
    {
      url: 'https://sim.example/surface',
      title: 'Surface code simulator',
      content: 'Simulate quantum surface codes in the browser.',
      engine: 'duckduckgo',
    },
    { url: 'https://blog.example/qec', title: 'QEC explained', content: 'Quantum error correction, explained simply.', engine: 'bing' },
  ],
};

const rss = (host: string) => `<?xml version="1.0"?>
<rss version="2.0"><channel><title>Example news</title><link>${host}/</link>
  <item><title>Quantum computer breaks record</title><link>${host}/news/1</link><description>A &lt;b&gt;quantum&lt;/b&gt; error correction milestone.</description><pubDate>Mon, 16 Nov 2026 09:00:00 GMT</pubDate></item>
  <item><title>Gardening tips</title><link>${host}/news/2</link><description>Roses in winter.</description><pubDate>Sun, 15 Nov 2026 09:00:00 GMT</pubDate></item>
  <item><title>Old quantum story</title><link>${host}/news/3</link><description>From last year.</description><pubDate>Fri, 01 Nov 2025 09:00:00 GMT</pubDate></item>
</channel></rss>`;

const atom = (host: string) => `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom blog</title>
  <entry><title type="html">Error correction &amp; you</title><link href="${host}/blog/qec"/><id>urn:1</id><updated>2026-11-10T00:00:00Z</updated><summary>Quantum codes for everyone.</summary><author><name>Grace</name></author></entry>
</feed>`;

const SITE = () => `<!doctype html><html><head><title>Example Site &amp; Co</title>
<meta name="description" content="We build quantum things.">
<link rel="alternate" type="application/rss+xml" title="News" href="/feed.xml">
<link rel="stylesheet" href="/s.css"></head><body>hi</body></html>`;

export async function startSourceServer(): Promise<SourceServer> {
  const state = {
    hits: [] as SourceServer['hits'],
    failing: new Set<string>(),
    hanging: new Set<string>(),
    llmMode: 'good' as 'good' | 'bad',
  };
  // the handler reads the returned object, so tests change its behaviour by setting its fields
  let server: SourceServer = state as unknown as SourceServer;
  const running = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const host = `http://${req.headers.host}`;
      server.hits.push({ path: url.pathname, query: url.searchParams, body });
      if (server.hanging.has(url.pathname)) return; // never answers
      if (server.failing.has(url.pathname)) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        return;
      }
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      const xml = (v: string, type = 'application/atom+xml') => res.writeHead(200, { 'content-type': type }).end(v);
      switch (url.pathname) {
        case '/arxiv/query':
          return xml(ARXIV);
        case '/crossref/works':
          return json(CROSSREF);
        case '/openalex/works':
          return json(OPENALEX);
        case '/wiki/w/rest.php/v1/search/page':
          return json(WIKI);
        case '/hn/search':
          return json(HN);
        case '/searx/search':
          return json(SEARX);
        case '/feed.xml':
          return xml(rss(host), 'application/rss+xml');
        case '/atom.xml':
          return xml(atom(host));
        case '/not-a-feed.xml':
          return xml('<html><body>nope</body></html>', 'text/html');
        case '/site/':
        case '/':
          return res.writeHead(200, { 'content-type': 'text/html' }).end(SITE());
        case '/llm/chat/completions': {
          const content =
            server.llmMode === 'good'
              ? JSON.stringify({
                  findings: [
                    { statement: 'Surface codes are a leading approach to quantum error correction.', citations: [1, 2] },
                    { statement: 'This one cites nothing that exists.', citations: [99] },
                  ],
                })
              : 'Sorry, I cannot answer in JSON.';
          return json({
            id: 'c1',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          });
        }
        default:
          res.writeHead(404).end();
      }
    });
  });
  server = Object.assign(running, state);
  return server;
}
