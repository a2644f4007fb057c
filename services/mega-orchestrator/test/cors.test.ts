/**
 * CORS on the MCP endpoints (src/http/cors.ts): granted to the origins in ALLOWED_ORIGINS only, on
 * /mcp (the hot path before Express included), a virtual server's endpoint and the HTTP+SSE pair;
 * never to a local page that is not listed, another site, or any other route; a preflight is
 * answered before authorization. A browser page using it: test/integration/mcp-browser-cors.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../src/auth/auth';
import { startGateway, type RunningGateway } from './helpers';

const APP = 'http://app.example:8080';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
};

const gateway = (dir: string, env: Record<string, string>): Promise<RunningGateway> =>
  startGateway([], dir, { HEALTH_POLL_MS: '600000', ...env });

describe('CORS on the MCP endpoints', () => {
  const tmp = tempDir('mcp-fleet-cors-');
  let g: RunningGateway;
  beforeAll(async () => {
    g = await gateway(path.join(tmp.dir, 'open'), { ALLOWED_ORIGINS: `${APP}/, http://other.example` });
  });
  afterAll(async () => {
    await g.stop();
    tmp.cleanup();
  });

  const preflight = (p: string, origin: string, headers = 'content-type, mcp-protocol-version, mcp-session-id, authorization') =>
    request(g.url)
      .options(p)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', headers);

  it('answers a listed origin’s preflight of /mcp with what it asked for', async () => {
    const res = await preflight('/mcp', APP).expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
    expect(res.headers['access-control-allow-headers']).toBe('content-type, mcp-protocol-version, mcp-session-id, authorization');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toMatch(/Origin/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // the origin as the browser spells it matches the listed one however it was written
    expect((await preflight('/mcp', 'HTTP://APP.EXAMPLE:8080').expect(204)).headers['access-control-allow-origin']).toBe(
      'HTTP://APP.EXAMPLE:8080',
    );
    // a virtual server's endpoint and the older HTTP+SSE pair too
    for (const p of ['/servers/any/mcp', '/sse', '/messages'])
      expect((await preflight(p, APP).expect(204)).headers['access-control-allow-origin']).toBe(APP);
    // headers that are not a list of names are not echoed
    expect((await preflight('/mcp', APP, 'a b, c;x').expect(204)).headers['access-control-allow-headers']).toBeUndefined();
  });

  it('marks the answers to a listed origin (the hot POST /mcp included) and exposes the session header', async () => {
    const res = await request(g.url)
      .post('/mcp')
      .set('Origin', APP)
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send(JSON.stringify(INIT))
      .expect(200);
    expect(res.headers['mcp-session-id']).toBeTruthy();
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-expose-headers']).toBe('Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate');
    // a request of another shape (through Express) too
    const other = await request(g.url)
      .post('/mcp')
      .set('Origin', 'http://other.example')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify(INIT));
    expect(other.headers['access-control-allow-origin']).toBe('http://other.example');
  });

  it('grants nothing to an unlisted local page, another site, or on any other route', async () => {
    const local = await request(g.url)
      .post('/mcp')
      .set('Origin', 'http://localhost:5173')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(INIT))
      .expect(200);
    expect(local.headers['access-control-allow-origin']).toBeUndefined();
    const localPreflight = await preflight('/mcp', 'http://localhost:5173');
    expect(localPreflight.status).not.toBe(204);
    expect(localPreflight.headers['access-control-allow-origin']).toBeUndefined();
    const evil = await preflight('/mcp', 'http://evil.example').expect(403);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    // a listed origin asking by a name that is not this machine's (DNS rebinding): refused first, nothing granted
    const rebound = await preflight('/mcp', APP).set('Host', 'app.example:8080').expect(403);
    expect(rebound.headers['access-control-allow-origin']).toBeUndefined();
    const reboundPost = await request(g.url)
      .post('/mcp')
      .set('Host', 'app.example:8080')
      .set('Origin', APP)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(INIT))
      .expect(403);
    expect(reboundPost.headers['access-control-allow-origin']).toBeUndefined();
    // the same listed origin on a path spelled otherwise is no MCP endpoint here
    for (const p of ['/MCP', '/mcp/', '/console/../mcp-x'])
      expect((await preflight(p, APP)).headers['access-control-allow-origin']).toBeUndefined();
    for (const p of ['/tools/list', '/console/api/session', '/services']) {
      const res = await preflight(p, APP);
      expect(res.status).not.toBe(204);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    const list = await request(g.url).get('/tools/list').set('Origin', APP).expect(200);
    expect(list.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('with no ALLOWED_ORIGINS, no CORS at all; "*" grants nothing', async () => {
    for (const env of [{}, { ALLOWED_ORIGINS: '*' }] as Record<string, string>[]) {
      const plain = await gateway(path.join(tmp.dir, `plain-${Object.keys(env).length}`), env);
      try {
        const res = await request(plain.url)
          .options('/mcp')
          .set('Origin', 'http://localhost:5173')
          .set('Access-Control-Request-Method', 'POST');
        expect(res.status).not.toBe(204);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      } finally {
        await plain.stop();
      }
    }
  });

  it('with authorization on, a preflight is answered without a token, and the 401 is readable by the page', async () => {
    const key = newApiKey('page', ['tools:read']);
    const keys = path.join(tmp.dir, 'keys.json');
    fs.writeFileSync(keys, JSON.stringify([key.entry]));
    const authed = await gateway(path.join(tmp.dir, 'authed'), { ALLOWED_ORIGINS: APP, API_KEYS_FILE: keys });
    try {
      const pre = await request(authed.url)
        .options('/mcp')
        .set('Origin', APP)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization, content-type')
        .expect(204);
      expect(pre.headers['access-control-allow-headers']).toBe('authorization, content-type');
      const denied = await request(authed.url)
        .post('/mcp')
        .set('Origin', APP)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(INIT))
        .expect(401);
      expect(denied.headers['access-control-allow-origin']).toBe(APP);
      expect(denied.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
      const ok = await request(authed.url)
        .post('/mcp')
        .set('Origin', APP)
        .set('Authorization', `Bearer ${key.key}`)
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream')
        .send(JSON.stringify(INIT))
        .expect(200);
      expect(ok.headers['access-control-allow-origin']).toBe(APP);
    } finally {
      await authed.stop();
    }
  });
});
