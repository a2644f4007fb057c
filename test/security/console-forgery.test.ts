/**
 * Class: a web page in the person's browser makes the console act for them (cross-site request
 * forgery), or reads what the console answers. The console's session is a cookie, sent by the browser
 * with any request to the gateway's host: another site, or another port of this machine (same site
 * for cookies, and a loopback Origin the fleet's Host/Origin rule lets in). By design every
 * /console/api request a browser sends must come from the console's own origin (Origin, when sent,
 * equal to it; Sec-Fetch-Site, when sent, same-origin), and every write made with the cookie carries
 * the session's own CSRF token in a header no other page can send without a CORS preflight the
 * gateway never grants. Tried: foreign and local Origins (other ports, other loopback names, "null",
 * another scheme), Sec-Fetch-Site cross-site and same-site, no token, a wrong token, another session's
 * token, the token in the body or the query, text/plain bodies; a login from another origin. Each
 * attack fails with nothing done (no key created, no call made), and the legitimate page still works
 * (same origin with its token; a script with a bearer key needs no token).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { startNotesService, type NotesService } from './fixtures/notes-service';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One request with exactly these headers (Origin, Cookie and Sec-Fetch-Site included, as a browser would send them). */
function send(base: string, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const url = new URL(target, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('console: forged requests from other pages', () => {
  const tmp = tempDir('mcp-fleet-console-forgery-');
  const keysFile = path.join(tmp.dir, 'keys.json');
  const admin = newApiKey('ops', ['admin', 'tools:all']);
  let notes: NotesService;
  let gateway: RunningGateway;
  let origin: string;
  /** A logged-in browser: its cookie and its CSRF token. */
  let cookie: string;
  let csrf: string;

  const login = async (key: string) => {
    const res = await send(origin, 'POST', '/console/api/login', { ...JSON_TYPE, origin }, JSON.stringify({ credential: key }));
    expect(res.status).toBe(200);
    const setCookie = res.headers['set-cookie']![0];
    return { cookie: setCookie.split(';')[0], csrf: res.body.csrf as string, setCookie };
  };
  const keyNames = () => (JSON.parse(fs.readFileSync(keysFile, 'utf8')) as { name: string }[]).map((k) => k.name);
  const callBody = JSON.stringify({ tool: 'note', arguments: { text: 'hi' }, session_id: 'forgery' });

  beforeAll(async () => {
    fs.writeFileSync(keysFile, JSON.stringify([admin.entry]), { mode: 0o600 });
    notes = await startNotesService();
    gateway = await startGateway([{ id: 'notes-mcp', url: notes.server.url, tools: ['note'] }], path.join(tmp.dir, 'data'), {
      API_KEYS_FILE: keysFile,
    });
    origin = gateway.url;
    ({ cookie, csrf } = await login(admin.key));
  });

  afterAll(async () => {
    await gateway?.stop();
    await notes?.server.stop();
    tmp.cleanup();
  });

  it('hands the browser an HttpOnly, SameSite=Strict cookie for /console/api only, and never the key', async () => {
    const { setCookie } = await login(admin.key);
    expect(setCookie).toMatch(/^mcpf_console=[\w-]{43}; Path=\/console\/api; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const session = await send(origin, 'GET', '/console/api/session', { cookie, origin });
    expect(session.status).toBe(200);
    expect(JSON.stringify(session.body)).not.toContain(admin.key);
    // the console's pages may not be framed, and its answers are not for other origins
    const page = await send(origin, 'GET', '/console/');
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(session.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(session.headers['access-control-allow-origin']).toBeUndefined();
  });

  const port = () => new URL(origin).port;
  const foreignOrigins = () => [
    'https://evil.example',
    'http://localhost:5173',
    `http://localhost:${Number(port()) + 1}`,
    'http://127.0.0.2:' + port(),
    `https://127.0.0.1:${port()}`,
    `http://localhost:${port()}`,
    'null',
  ];

  it('refuses a write from any other origin, even with the cookie and the right token', async () => {
    for (const o of foreignOrigins()) {
      const create = await send(
        origin,
        'POST',
        '/console/api/keys',
        { ...JSON_TYPE, cookie, origin: o, 'x-console-csrf': csrf },
        JSON.stringify({ name: `evil-${keyNames().length}`, scopes: ['admin'] }),
      );
      expect({ o, status: create.status }).toEqual({ o, status: 403 });
      const call = await send(origin, 'POST', '/console/api/call', { ...JSON_TYPE, cookie, origin: o, 'x-console-csrf': csrf }, callBody);
      expect({ o, status: call.status }).toEqual({ o, status: 403 });
    }
    for (const site of ['cross-site', 'same-site']) {
      const res = await send(
        origin,
        'POST',
        '/console/api/call',
        { ...JSON_TYPE, cookie, 'sec-fetch-site': site, 'x-console-csrf': csrf },
        callBody,
      );
      expect({ site, status: res.status, code: res.body.code }).toEqual({ site, status: 403, code: 'FORBIDDEN' });
    }
    expect(keyNames()).toEqual(['ops']);
    expect(notes.calls()).toBe(0);
  });

  it('refuses reads from any other origin (the answer is never produced for it)', async () => {
    for (const o of foreignOrigins()) {
      for (const target of ['/console/api/session', '/console/api/history', '/console/api/keys', '/console/api/catalog']) {
        const res = await send(origin, 'GET', target, { cookie, origin: o });
        expect({ o, target, status: res.status }).toEqual({ o, target, status: 403 });
      }
    }
    const tail = await send(origin, 'GET', '/console/api/logs/mega-orchestrator', { cookie, 'sec-fetch-site': 'same-site' });
    expect(tail.status).toBe(403);
  });

  it('refuses a cookie write without the session’s own token in the header', async () => {
    const other = await login(admin.key);
    const attempts: Record<string, string>[] = [
      {},
      { 'x-console-csrf': '' },
      { 'x-console-csrf': 'x'.repeat(43) },
      { 'x-console-csrf': `${csrf}x` },
      { 'x-console-csrf': csrf.slice(1) },
      { 'x-console-csrf': other.csrf },
      { 'x-console-csrf': csrf.toUpperCase() },
    ];
    for (const extra of attempts) {
      const res = await send(origin, 'POST', '/console/api/call', { ...JSON_TYPE, cookie, origin, ...extra }, callBody);
      expect({ extra, status: res.status, code: res.body.code }).toEqual({ extra, status: 403, code: 'FORBIDDEN' });
      const del = await send(origin, 'DELETE', '/console/api/keys/ops', { cookie, ...extra });
      expect({ extra, status: del.status }).toEqual({ extra, status: 403 });
    }
    // the token anywhere but the header does not count; neither does a form's content type
    const inBody = await send(
      origin,
      'POST',
      '/console/api/call',
      { ...JSON_TYPE, cookie },
      JSON.stringify({ ...JSON.parse(callBody), csrf }),
    );
    expect(inBody.status).toBe(403);
    const inQuery = await send(origin, 'POST', `/console/api/call?x-console-csrf=${csrf}`, { ...JSON_TYPE, cookie }, callBody);
    expect(inQuery.status).toBe(403);
    const asForm = await send(origin, 'POST', '/console/api/call', { 'content-type': 'text/plain', cookie }, callBody);
    expect(asForm.status).toBe(403);
    expect(notes.calls()).toBe(0);
    expect(keyNames()).toEqual(['ops']);
  });

  it('refuses a login posted from another page or as a form, and a body that is not JSON', async () => {
    for (const o of foreignOrigins()) {
      const res = await send(origin, 'POST', '/console/api/login', { ...JSON_TYPE, origin: o }, JSON.stringify({ credential: admin.key }));
      expect({ o, status: res.status, cookie: res.headers['set-cookie'] }).toEqual({ o, status: 403, cookie: undefined });
    }
    const form = await send(
      origin,
      'POST',
      '/console/api/login',
      { 'content-type': 'application/x-www-form-urlencoded', origin },
      `credential=${admin.key}`,
    );
    expect(form.status).toBe(400);
    expect(form.headers['set-cookie']).toBeUndefined();
    const plain = await send(
      origin,
      'POST',
      '/console/api/login',
      { 'content-type': 'text/plain', origin },
      JSON.stringify({ credential: admin.key }),
    );
    expect(plain.status).toBe(400);
  });

  it('still serves the console’s own page: same origin with its token, and a script with a bearer key', async () => {
    const res = await send(
      origin,
      'POST',
      '/console/api/call',
      { ...JSON_TYPE, cookie, origin, 'sec-fetch-site': 'same-origin', 'x-console-csrf': csrf },
      callBody,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, tool: 'note', service: 'notes-mcp' });
    const script = await send(origin, 'POST', '/console/api/call', { ...JSON_TYPE, authorization: `Bearer ${admin.key}` }, callBody);
    expect(script.status).toBe(200);
    expect(notes.calls()).toBe(2);
    const created = await send(
      origin,
      'POST',
      '/console/api/keys',
      { ...JSON_TYPE, cookie, origin, 'x-console-csrf': csrf },
      JSON.stringify({ name: 'ci', scopes: ['tools:read'] }),
    );
    expect(created.status).toBe(201);
    expect(keyNames()).toEqual(['ops', 'ci']);
  });
});
