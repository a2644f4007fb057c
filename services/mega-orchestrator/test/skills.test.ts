/**
 * The gateway's skills (src/skills.ts) over services that serve them (GET /skills/list and the
 * POST routes, as marketplace-mcp does): merged and paged by URI under skill://<service-id>/,
 * asked of each service as little as the answers allow, and scoped by the caller's token.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../src/auth/auth';
import { post2026, startGateway, type RunningGateway } from './helpers';

const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const body = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n# ${name}\n`;

/** A service serving these skills (one SKILL.md each) the way marketplace-mcp does, counting what it is asked. */
async function skillService(names: string[], mode: 'serve' | 'fail' | 'none' = 'serve') {
  const hits: string[] = [];
  const entry = (name: string) => ({
    uri: `skill://${name}/SKILL.md`,
    frontmatter: { name, description: `The ${name} skill.` },
    resources: [{ uri: `skill://${name}/SKILL.md`, digest: digest(body(name)), size: Buffer.byteLength(body(name)) }],
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = `${req.method} ${req.url?.split('?')[0]}`;
      hits.push(route);
      const input = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as { uri?: string }) : {};
      const name = /^skill:\/\/([a-z0-9-]+)\/SKILL\.md$/.exec(input.uri ?? '')?.[1];
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (route === 'GET /health') return send(200, { status: 'healthy' });
      if (route === 'GET /tools/list') return send(200, { tools: [] });
      if (mode === 'fail') return send(500, { success: false, error: 'broken', code: 'INTERNAL' });
      if (mode === 'none') return send(404, { success: false, error: 'No route', code: 'NOT_FOUND' });
      if (route === 'GET /skills/list') return send(200, { skills: names.map(entry) });
      if (route === 'POST /skills/get' && name && names.includes(name)) return send(200, { skill: entry(name) });
      if (route === 'POST /resources/read' && name && names.includes(name))
        return send(200, { contents: [{ uri: input.uri, mimeType: 'text/markdown', text: body(name) }] });
      send(404, { success: false, error: 'not found', code: 'NOT_FOUND' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const tmp = tempDir('gateway-skills-');
let a: Awaited<ReturnType<typeof skillService>>;
let b: Awaited<ReturnType<typeof skillService>>;
let broken: Awaited<ReturnType<typeof skillService>>;
let plain: Awaited<ReturnType<typeof skillService>>;
let g: RunningGateway;
let readerOfA: string;

beforeAll(async () => {
  a = await skillService(['alpha', 'beta', 'gamma']);
  b = await skillService(['alpha', 'delta']);
  broken = await skillService(['omega'], 'fail');
  // a service without skills (GET /skills/list: 404)
  plain = await skillService([], 'none');
  const key = newApiKey('team-a-reader', ['service:team-a:read']);
  readerOfA = key.key;
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([key.entry]));
  g = await startGateway(
    [
      { id: 'team-a', url: a.url },
      { id: 'team-b', url: b.url },
      { id: 'broken-mcp', url: broken.url },
      { id: 'plain-mcp', url: plain.url },
    ],
    tmp.dir,
    { MCP_PAGE_SIZE: '2', HEALTH_POLL_MS: '600000' },
  );
});
afterAll(async () => {
  await g.stop();
  await Promise.all([a.stop(), b.stop(), broken.stop(), plain.stop()]);
  tmp.cleanup();
});

const rpc = async (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await post2026(g.url, method, params, {
    headers: { ...(method === 'resources/read' ? { 'mcp-name': String(params.uri) } : {}), ...headers },
  });
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
};

describe('the gateway’s skills', () => {
  it('merges every service’s skills under its name and pages them by URI with a cursor of its own', async () => {
    const uris: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const page = (await rpc('skills/list', cursor ? { cursor } : {})).result!;
      sizes.push(page.skills.length);
      uris.push(...page.skills.map((s: { uri: string }) => s.uri));
      cursor = page.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([2, 2, 1]);
    expect(uris).toEqual([
      'skill://team-a/alpha/SKILL.md',
      'skill://team-a/beta/SKILL.md',
      'skill://team-a/gamma/SKILL.md',
      'skill://team-b/alpha/SKILL.md',
      'skill://team-b/delta/SKILL.md',
    ]);
    expect((await rpc('skills/list', { cursor: 'not-ours' })).error?.code).toBe(-32602);
    expect((await rpc('skills/list', { cursor: 7 })).error?.code).toBe(-32602);
  });

  it('asks a service without skills once a minute, reuses a listing for a second, asks skills/get every time', async () => {
    const count = (hits: string[], route: string) => hits.filter((h) => h === route).length;
    const before = { a: count(a.hits, 'GET /skills/list'), get: count(a.hits, 'POST /skills/get') };
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      await rpc('skills/list', {});
      await rpc('resources/list', {});
    }
    // one read per second at most (plus the one under way when a second ends)
    expect(count(a.hits, 'GET /skills/list') - before.a).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 1000) + 1);
    // plain-mcp answered 404 the first time (the first test's listing): not asked since
    expect(count(plain.hits, 'GET /skills/list')).toBe(1);
    await rpc('skills/get', { uri: 'skill://team-a/beta/SKILL.md' });
    await rpc('skills/get', { uri: 'skill://team-a/beta/SKILL.md' });
    expect(count(a.hits, 'POST /skills/get') - before.get).toBe(2);
  });

  it('a service whose listing fails adds nothing; the others are served', async () => {
    const listed = (await rpc('skills/list', {})).result!;
    expect(JSON.stringify(listed)).not.toContain('broken-mcp');
    expect((await rpc('skills/get', { uri: 'skill://broken-mcp/omega/SKILL.md' })).error?.code).toBe(-32012);
  });

  it('a token sees the skills of the services it may read; the others are unknown to it', async () => {
    const auth = { authorization: `Bearer ${readerOfA}` };
    const scoped = await startGateway(
      [
        { id: 'team-a', url: a.url },
        { id: 'team-b', url: b.url },
      ],
      path.join(tmp.dir, 'scoped'),
      { API_KEYS_FILE: path.join(tmp.dir, 'keys.json'), HEALTH_POLL_MS: '600000' },
    );
    try {
      const call = async (method: string, params: Record<string, unknown>) => {
        const res = await post2026(scoped.url, method, params, {
          headers: { ...auth, ...(method === 'resources/read' ? { 'mcp-name': String(params.uri) } : {}) },
        });
        return (await res.json()) as { result?: Record<string, any>; error?: { code: number } };
      };
      expect((await call('skills/list', {})).result!.skills.map((s: { uri: string }) => s.uri)).toEqual([
        'skill://team-a/alpha/SKILL.md',
        'skill://team-a/beta/SKILL.md',
        'skill://team-a/gamma/SKILL.md',
      ]);
      expect((await call('skills/get', { uri: 'skill://team-b/delta/SKILL.md' })).error?.code).toBe(-32602);
      expect((await call('resources/read', { uri: 'skill://team-b/delta/SKILL.md' })).error?.code).toBe(-32602);
      expect((await call('resources/read', { uri: 'skill://team-a/beta/SKILL.md' })).result!.contents[0].text).toBe(body('beta'));
      const listed = (await call('resources/list', {})).result!.resources.map((r: { uri: string }) => r.uri);
      expect(listed.filter((u: string) => u.startsWith('skill://'))).toEqual([
        'skill://team-a/alpha/SKILL.md',
        'skill://team-a/beta/SKILL.md',
        'skill://team-a/gamma/SKILL.md',
      ]);
    } finally {
      await scoped.stop();
    }
  });
});
