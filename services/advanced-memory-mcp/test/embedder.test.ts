import type http from 'node:http';
import { serve } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { createEmbedder, LocalEmbedder, OpenAIEmbedder } from '../src/embedder';
import { cosine } from '../src/text';

describe('LocalEmbedder', () => {
  const e = new LocalEmbedder(384);

  it('is deterministic, L2-normalised, case-insensitive and 384-dimensional', async () => {
    const [a, b, c] = await e.embed(['The quick brown fox', 'The quick brown fox', 'the QUICK brown fox!']);
    expect(a).toHaveLength(384);
    expect(a).toEqual(b);
    expect(a).toEqual(c);
    expect(Math.hypot(...a)).toBeCloseTo(1, 10);
    expect(a.some((x) => x !== 0)).toBe(true);
  });

  it('scores lexically similar texts higher than unrelated ones', async () => {
    const [base, close, partial, far] = await e.embed([
      'the cat sat on the mat',
      'a cat sat on a mat',
      'cats are sitting on mats',
      'quarterly revenue grew strongly in europe',
    ]);
    const sClose = cosine(base, close);
    const sPartial = cosine(base, partial);
    const sFar = cosine(base, far);
    expect(sClose).toBeGreaterThan(sPartial);
    expect(sPartial).toBeGreaterThan(sFar);
    expect(sClose).toBeGreaterThan(0.5);
    expect(Math.abs(sFar)).toBeLessThan(0.25);
  });

  it('refuses text with nothing to embed instead of returning a zero vector', async () => {
    await expect(e.embed(['ok', '  !!! ... ---  '])).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/Text 1/),
    });
    await expect(e.embed([''])).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('embeds non-Latin scripts', async () => {
    const [a, b] = await e.embed(['東京の天気', 'погода в Москве']);
    expect(cosine(a, b)).toBeLessThan(0.5);
  });
});

describe('OpenAIEmbedder against a local OpenAI-compatible server', () => {
  let server: RunningServer;
  let behaviour: 'ok' | 'zero' | 'error500' | 'error400' | 'garbage' | 'short' | 'slow' | 'unauthorized' = 'ok';
  const seen: { url?: string; auth?: string; body?: { model: string; input: string[] } }[] = [];

  beforeAll(async () => {
    server = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as { model: string; input: string[] };
        seen.push({ url: req.url, auth: req.headers.authorization, body });
        const send = (status: number, payload: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
        };
        if (behaviour === 'slow') return void setTimeout(() => send(200, { data: [] }), 1500);
        if (behaviour === 'error500') return send(500, { error: { message: 'model crashed' } });
        if (behaviour === 'error400') return send(400, { error: { message: 'bad model' } });
        if (behaviour === 'unauthorized') return send(401, { error: { message: 'bad key sk-secret-123' } });
        if (behaviour === 'garbage') return send(200, '<html>not json</html>');
        if (behaviour === 'short') return send(200, { data: [{ embedding: [1, 0, 0, 0], index: 0 }] });
        // Fixed vectors by position, returned in reverse order to check the index handling.
        const data = body.input.map((_, i) => ({ index: i, embedding: behaviour === 'zero' ? [0, 0, 0, 0] : [i + 1, 1, 0, 0.5] }));
        send(200, { object: 'list', data: data.reverse(), model: body.model });
      });
    });
  });

  afterAll(async () => {
    await server.stop();
  });

  beforeEach(() => {
    behaviour = 'ok';
    seen.length = 0;
  });

  const embedder = (extra: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) =>
    new OpenAIEmbedder({ url: server.url, model: 'test-embed', apiKey: 'sk-secret-123', timeoutMs: 2000, ...extra });

  it('posts {model, input} to /v1/embeddings with the bearer key and orders results by index', async () => {
    const vectors = await embedder().embed(['a', 'b', 'c']);
    expect(vectors).toEqual([
      [1, 1, 0, 0.5],
      [2, 1, 0, 0.5],
      [3, 1, 0, 0.5],
    ]);
    expect(seen[0]).toEqual({ url: '/v1/embeddings', auth: 'Bearer sk-secret-123', body: { model: 'test-embed', input: ['a', 'b', 'c'] } });
  });

  it('accepts a base URL that already ends in /v1', async () => {
    await embedder({ url: `${server.url}/v1/` }).embed(['a']);
    expect(seen[0].url).toBe('/v1/embeddings');
  });

  it('is chosen by createEmbedder when EMBEDDINGS_URL is set', () => {
    const e = createEmbedder({
      EMBEDDINGS_URL: server.url,
      EMBEDDINGS_MODEL: 'm',
      EMBEDDINGS_TIMEOUT_MS: 1000,
      LOCAL_EMBEDDING_DIMENSIONS: 384,
    });
    expect(e.kind).toBe('openai-compatible');
    expect(createEmbedder({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_TIMEOUT_MS: 1000, LOCAL_EMBEDDING_DIMENSIONS: 64 }).dimensions).toBe(64);
  });

  it.each([
    ['error500', 'UPSTREAM_UNAVAILABLE', /HTTP 500/],
    ['error400', 'UPSTREAM_ERROR', /HTTP 400/],
    ['unauthorized', 'UPSTREAM_ERROR', /EMBEDDINGS_API_KEY/],
    ['garbage', 'UPSTREAM_ERROR', /something other than/],
    ['zero', 'UPSTREAM_ERROR', /zero vector/],
    ['short', 'UPSTREAM_ERROR', /1 embeddings for 2 texts/],
    ['slow', 'UPSTREAM_UNAVAILABLE', /did not answer within 300 ms/],
  ] as const)('maps a %s answer to %s, never a vector, never the key', async (mode, code, message) => {
    behaviour = mode;
    // (only the slow answer is meant to outlast the time limit: a loaded CI machine once took 300 ms over a 500)
    const err = await embedder({ timeoutMs: mode === 'slow' ? 300 : 10_000 })
      .embed(['a', 'b'])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ code, message: expect.stringMatching(message) });
    expect(String((err as Error).message)).not.toContain('sk-secret-123');
  });

  it('checks the configured dimensions', async () => {
    await expect(embedder({ dimensions: 8 }).embed(['a'])).rejects.toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: expect.stringMatching(/expected 8/),
    });
  });

  it('reports an unreachable endpoint as UPSTREAM_UNAVAILABLE', async () => {
    const dead = await serve((_req, res) => res.end());
    const url = dead.url;
    await dead.stop();
    await expect(new OpenAIEmbedder({ url, model: 'm', timeoutMs: 1000 }).embed(['a'])).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringMatching(/unreachable/),
    });
  });
});
