/**
 * Authorization when configured: protected resource metadata, 401 with WWW-Authenticate naming it,
 * JWT access tokens checked (signature, issuer, audience, expiry), scopes that decide which tools a
 * token sees in tools/list and may call, API keys hashed at rest, and the audit log.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serve, tempDir, testLogger } from '@mcp-fleet/testing';
import { createApp, type Gateway } from '../src/http/app';
import { Authorizer, newApiKey } from '../src/auth/auth';
import { alphaTools, gatewayConfig, promptService, startDownstream, TEST_INVENTORY, type Downstream } from './helpers';

const ISSUER = 'https://issuer.test';
const RESOURCE = 'http://gateway.test/mcp';

describe('authorization', () => {
  const tmp = tempDir('mcp-fleet-auth-');
  let alpha: Downstream;
  let gw: Gateway;
  let url: string;
  let stop: () => Promise<void>;
  let sign: (claims: Record<string, unknown>, opts?: { aud?: string; iss?: string; exp?: string }) => Promise<string>;
  let apiKey: string;
  let notes: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    notes = await serve(
      promptService('notes-mcp', [{ name: 'summarize', description: 'Summarize a topic.', arguments: [{ name: 'topic' }] }]).app,
    );
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    sign = (claims, opts = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(opts.iss ?? ISSUER)
        .setAudience(opts.aud ?? RESOURCE)
        .setIssuedAt()
        .setExpirationTime(opts.exp ?? '5m')
        .sign(privateKey);
    const key = newApiKey('ci-bot', ['tools:read']);
    apiKey = key.key;
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([key.entry]));
    gw = createApp({
      config: gatewayConfig(tmp.dir, {
        AUTH_ISSUER: ISSUER,
        AUTH_RESOURCE: RESOURCE,
        API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
        HEALTH_POLL_MS: '600000',
      }),
      logger: testLogger('gateway'),
      services: [
        { id: 'alpha-mcp', url: alpha.url },
        { id: 'notes-mcp', url: notes.url },
      ],
      inventory: TEST_INVENTORY,
      autoStart: false,
      authKeySet: createLocalJWKSet({ keys: [jwk] }),
    });
    await gw.refresh();
    const running = await serve(gw.app);
    url = running.url;
    stop = async () => {
      await gw.mcp.close();
      running.server.closeAllConnections();
      await running.stop();
      await gw.close();
    };
  });
  afterAll(async () => {
    await stop();
    await alpha.stop();
    await notes.stop();
    tmp.cleanup();
  });

  it('publishes protected resource metadata and answers 401 with WWW-Authenticate naming it', async () => {
    const meta = await request(url).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    expect(meta.body).toMatchObject({
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      scopes_supported: expect.arrayContaining(['tools:read', 'tools:write', 'tools:all']),
    });
    for (const [method, route] of [
      ['post', '/mcp'],
      ['get', '/tools/list'],
      ['get', '/services'],
    ] as const) {
      const res = await request(url)[method](route).send({ tool: 'echo', arguments: {} });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe(
        'Bearer resource_metadata="http://gateway.test/.well-known/oauth-protected-resource/mcp"',
      );
    }
    await request(url).get('/health').expect(200);
    await request(url).get('/metrics').expect(200);
  });

  it.each([
    ['another audience', { aud: 'http://other.test/mcp' }, /aud/],
    ['another issuer', { iss: 'https://evil.test' }, /iss/],
    ['an expired token', { exp: '-1m' }, /expired/],
  ])('refuses %s with invalid_token', async (_what, opts, why) => {
    const token = await sign({ sub: 'u1', scope: 'tools:all' }, opts);
    const res = await request(url).post('/mcp').set('authorization', `Bearer ${token}`).send({ tool: 'echo', arguments: {} }).expect(401);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(res.body.error).toMatch(why);
  });

  it('refuses a token that names no subject or client (what it created would be every such token’s)', async () => {
    const nobody = await sign({ scope: 'tools:all' });
    const res = await request(url).get('/tools/list').set('authorization', `Bearer ${nobody}`).expect(401);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(res.body.error).toMatch(/no subject \(sub\) or client/);
    // a client_credentials token without sub is its client's
    await request(url)
      .get('/tools/list')
      .set('authorization', `Bearer ${await sign({ client_id: 'svc-1', scope: 'tools:read' })}`)
      .expect(200);
  });

  it('refuses an API_KEYS_FILE naming two keys alike (the name is the caller)', () => {
    const file = path.join(tmp.dir, 'twice.json');
    fs.writeFileSync(file, JSON.stringify([newApiKey('ci', ['tools:read']).entry, newApiKey('ci', ['tools:all']).entry]));
    expect(() => new Authorizer({ resource: RESOURCE, apiKeysFile: file, logger: testLogger('auth') })).toThrow(
      /two keys are named "ci"; give every key a name of its own/,
    );
  });

  it('refuses a forged signature and an unknown API key', async () => {
    const token = await sign({ sub: 'u1', scope: 'tools:all' });
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${'A'.repeat(40)}`;
    await request(url).get('/tools/list').set('authorization', `Bearer ${forged}`).expect(401);
    await request(url).get('/tools/list').set('authorization', 'Bearer mcpf_not-a-key').expect(401);
  });

  it('lists and calls only what the scopes allow; a call beyond them is 403 insufficient_scope', async () => {
    const reader = await sign({ sub: 'reader', scope: 'tools:read' });
    const list = await request(url).get('/tools/list').set('authorization', `Bearer ${reader}`).expect(200);
    const names = list.body.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('echo');
    expect(names).not.toContain('write_note');
    await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${reader}`)
      .send({ tool: 'echo', arguments: { text: 'hi' } })
      .expect(200);
    const denied = await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${reader}`)
      .send({ tool: 'write_note', arguments: { note: 'x', password: 'hunter2' } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['tools:write', 'service:alpha-mcp'] } });
    expect(denied.headers['www-authenticate']).toMatch(/error="insufficient_scope", .*scope="tools:write service:alpha-mcp"/);
    expect(alpha.calls.get('write_note') ?? 0).toBe(0);

    const writer = await sign({ sub: 'writer', scope: 'service:alpha-mcp' });
    await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${writer}`)
      .send({ tool: 'write_note', arguments: { note: 'x', password: 'hunter2' } })
      .expect(200);
    expect(alpha.calls.get('write_note')).toBe(1);
  });

  it('filters the MCP tools/list and refuses tools/call for an SDK client the same way', async () => {
    const reader = await sign({ sub: 'mcp-reader', scope: 'tools:read' });
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${reader}` } } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      expect(tools.map((t) => t.name)).not.toContain('write_note');
      const denied = await client.callTool({ name: 'write_note', arguments: { text: 'x' } });
      expect(denied.isError).toBe(true);
      expect(denied.structuredContent).toMatchObject({ code: 'FORBIDDEN' });
    } finally {
      await client.close();
    }
  });

  it('shows a token only the prompts of services it may read, in both MCP eras, and refuses the rest as unknown', async () => {
    const reader = await sign({ sub: 'prompt-reader', scope: 'service:notes-mcp:read' });
    const other = await sign({ sub: 'alpha-only', scope: 'service:alpha-mcp' });
    // 2026-07-28, stateless
    const rpc = async (token: string, method: string, params: Record<string, unknown>) => {
      const res = await request(url)
        .post('/mcp')
        .set({ authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method })
        .set(method === 'prompts/get' ? { 'mcp-name': String(params.name) } : {})
        .send({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: {
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
            ...params,
          },
        });
      return res.body as { result?: { prompts?: { name: string }[]; messages?: unknown[]; ttlMs?: number }; error?: { code: number } };
    };
    const seen = await rpc(reader, 'prompts/list', {});
    expect(seen.result?.prompts?.map((p) => p.name)).toEqual(['summarize']);
    expect(seen.result?.ttlMs).toBe(0); // a per-token answer is not for shared caches
    expect((await rpc(reader, 'prompts/get', { name: 'summarize', arguments: { topic: 'x' } })).result?.messages).toHaveLength(1);
    expect((await rpc(other, 'prompts/list', {})).result?.prompts).toEqual([]);
    expect((await rpc(other, 'prompts/get', { name: 'summarize' })).error?.code).toBe(-32602);
    // 2025-11-25, in a session
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${other}` } } }),
    );
    try {
      expect((await client.listPrompts()).prompts).toEqual([]);
      await expect(client.getPrompt({ name: 'summarize' })).rejects.toThrow(/Unknown prompt/);
    } finally {
      await client.close();
    }
  });

  it('accepts an API key (only its hash is stored) with its scopes', async () => {
    expect(fs.readFileSync(path.join(tmp.dir, 'keys.json'), 'utf8')).not.toContain(apiKey);
    await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${apiKey}`)
      .send({ tool: 'echo', arguments: { text: 'k' } })
      .expect(200);
    await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${apiKey}`)
      .send({ tool: 'write_note', arguments: { note: 'k' } })
      .expect(403);
  });

  it('writes every tool call to the audit log: who, tool, service, outcome, duration; never arguments', async () => {
    await gw.close(); // flushes the audit stream; afterAll's stop() closes again harmlessly
    const lines = fs
      .readFileSync(path.join(tmp.dir, 'gateway', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ who: 'oauth:reader', tool: 'echo', service: 'alpha-mcp', outcome: 'ok', durationMs: expect.any(Number) }),
        expect.objectContaining({ who: 'oauth:reader', tool: 'write_note', outcome: 'FORBIDDEN' }),
        expect.objectContaining({ who: 'api-key:ci-bot', tool: 'echo', outcome: 'ok' }),
      ]),
    );
    const text = JSON.stringify(lines);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('"note"');
    expect(text).not.toContain(apiKey);
  });
});

/**
 * End to end: a real authorization server (oidc-provider, in a child process) and the official SDK
 * client doing the OAuth flow itself: 401 → protected resource metadata → the server's metadata →
 * client_credentials token for the gateway's resource → the call.
 */
describe('authorization against a real authorization server', () => {
  const tmp = tempDir('mcp-fleet-oidc-');
  let alpha: Downstream;
  let as: ChildProcess;
  let issuer: string;
  let gw: Gateway;
  let url: string;
  let running: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    // the gateway listens first, so its resource URL (the tokens' audience) is known to the server
    const late: { app?: Gateway['app'] } = {};
    running = await serve((req, res) => (late.app ? late.app(req, res) : res.writeHead(503).end()));
    url = running.url;
    const { spawn } = await import('node:child_process');
    as = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'oidc-server.mjs')], {
      env: {
        ...process.env,
        RESOURCE: `${url}/mcp`,
        CLIENT_ID: 'fleet-bot',
        CLIENT_SECRET: 'a-long-client-secret-for-tests',
        SCOPES: 'tools:read',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      as.stdout!.on('data', (c) => {
        out += c;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
      as.stderr!.on('data', (c) => (err += c));
      as.on('exit', (code) => reject(new Error(`oidc-provider exited (${code}): ${err}`)));
    });
    gw = createApp({
      config: gatewayConfig(tmp.dir, { AUTH_ISSUER: issuer, AUTH_RESOURCE: `${url}/mcp`, HEALTH_POLL_MS: '600000' }),
      logger: testLogger('gateway'),
      services: [{ id: 'alpha-mcp', url: alpha.url }],
      inventory: TEST_INVENTORY,
      autoStart: false,
    });
    await gw.refresh();
    late.app = gw.app;
  }, 60_000);

  afterAll(async () => {
    await gw?.mcp.close();
    running?.server.closeAllConnections();
    await running?.stop();
    await gw?.close();
    as?.kill('SIGTERM');
    await alpha?.stop();
    tmp.cleanup();
  });

  it('lets the SDK client obtain a token by client_credentials and call within its scopes', async () => {
    const { ClientCredentialsProvider } = await import('@modelcontextprotocol/sdk/client/auth-extensions.js');
    const authProvider = new ClientCredentialsProvider({
      clientId: 'fleet-bot',
      clientSecret: 'a-long-client-secret-for-tests',
      scope: 'tools:read',
      // the credentials go only to this authorization server (the SDK warns without it)
      expectedIssuer: issuer,
    });
    const client = new Client({ name: 'oauth-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      expect(tools.map((t) => t.name)).not.toContain('write_note');
      const echo = await client.callTool({ name: 'echo', arguments: { text: 'through OAuth' } });
      expect(echo.isError).toBe(false);
      const token = authProvider.tokens()?.access_token;
      expect(token).toMatch(/^ey/); // a JWT from the server, audience-bound to the gateway
      const claims = JSON.parse(Buffer.from(token!.split('.')[1], 'base64url').toString()) as { aud: string; iss: string; scope: string };
      expect(claims).toMatchObject({ aud: `${url}/mcp`, iss: issuer, scope: 'tools:read' });
    } finally {
      await client.close();
    }
    // anything that is not a token of this server is refused
    const other = await request(url).get('/tools/list').set('authorization', 'Bearer not-a-jwt').expect(401);
    expect(other.headers['www-authenticate']).toMatch(/invalid_token/);
  });
});
