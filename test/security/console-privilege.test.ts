/**
 * Class: a console user reaches what belongs to another principal or to the administrator. By
 * design the console acts as the logged-in principal through the gateway's own code (scopes, the
 * history's owner keys), lists only sessions whose owner is exactly the caller (a key named
 * "eve api-key:bob" does not see bob's, nor bob eve's; history recorded without authorization is
 * nobody's), keeps keys, the audit log and log tails for the admin scope (and for nobody when
 * authorization is off; virtual servers too, whose writes go through the admin API with the caller's
 * own credential), ends a revoked key's console sessions at once, tails only the fleet's log
 * files of known services (no path from the request, no symbolic link followed), and accepts new keys
 * only with known scopes and plain names. Tried with several principals, names, ids and spellings;
 * the legitimate uses still work.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { startNotesService, type NotesService } from './fixtures/notes-service';

const JSON_TYPE = { 'content-type': 'application/json' };

async function call(base: string, method: string, target: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(new URL(target, base), {
    method,
    headers: { ...headers, ...(body !== undefined ? JSON_TYPE : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json, headers: res.headers };
}

/** The first bytes of an answer (an SSE stream stays open: read a little, then hang up). */
function firstBytes(base: string, target: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(target, base), { headers }, (res) => {
      let text = '';
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text });
      };
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        if (text.includes('\n\n')) done();
      });
      res.on('end', done);
      setTimeout(done, 3000);
    });
    req.on('error', reject);
  });
}

describe('console: one principal reaching another’s, or the administrator’s', () => {
  const tmp = tempDir('mcp-fleet-console-privilege-');
  const dataDir = path.join(tmp.dir, 'data');
  const keysFile = path.join(tmp.dir, 'keys.json');
  const ops = newApiKey('ops', ['admin', 'tools:all']);
  const bob = newApiKey('bob', ['tools:all']);
  // a name written by hand (the console refuses spaces): its owner key ends as bob's does
  const eve = newApiKey('eve api-key:bob', ['tools:all']);
  let notes: NotesService;
  let gateway: RunningGateway;
  const bearer = (k: { key: string }) => ({ authorization: `Bearer ${k.key}` });
  const note = (who: { key: string }, session: string, text: string) =>
    call(gateway.url, 'POST', '/mcp', bearer(who), { tool: 'note', arguments: { text }, session_id: session });

  beforeAll(async () => {
    notes = await startNotesService();
    const specs = [{ id: 'notes-mcp', url: notes.server.url, tools: ['note'] }];
    // First without authorization, on the same data directory: what it records is nobody's.
    const open = await startGateway(specs, dataDir);
    expect(
      (await call(open.url, 'POST', '/mcp', {}, { tool: 'note', arguments: { text: 'anonymous' }, session_id: 'shared' })).status,
    ).toBe(200);
    // and without authorization the admin pages are nobody's either; calls stay open, as on every route
    for (const target of [
      '/console/api/keys',
      '/console/api/audit',
      '/console/api/logs',
      '/console/api/logs/notes-mcp',
      '/console/api/servers',
    ]) {
      const res = await call(open.url, 'GET', target);
      expect({ target, status: res.status }).toEqual({ target, status: 403 });
    }
    expect((await call(open.url, 'GET', '/console/api/session')).body).toMatchObject({
      authorization: 'off',
      loggedIn: true,
      admin: false,
    });
    await open.gw.history.flush();
    await open.stop();

    fs.writeFileSync(keysFile, JSON.stringify([ops.entry, bob.entry, eve.entry]), { mode: 0o600 });
    fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'logs', 'notes-mcp.log'), `${JSON.stringify({ level: 'info', message: 'notes-mcp listening' })}\n`);
    // the gateway's own log name points at the keys file
    fs.symlinkSync(keysFile, path.join(dataDir, 'logs', 'mega-orchestrator.log'));
    gateway = await startGateway(specs, dataDir, { API_KEYS_FILE: keysFile });
    for (const [who, session, text] of [
      [bob, 's1', 'bob one'],
      [bob, 's2', 'bob two'],
      [eve, 's1', 'eve one'],
    ] as const)
      expect((await note(who, session, text)).status).toBe(200);
  });

  afterAll(async () => {
    await gateway?.stop();
    await notes?.server.stop();
    tmp.cleanup();
  });

  it('lists each principal’s own sessions only, whatever the other owners are named', async () => {
    const ids = async (who: { key: string }) =>
      ((await call(gateway.url, 'GET', '/console/api/history', bearer(who))).body.sessions as { session_id: string }[])
        .map((s) => s.session_id)
        .sort();
    expect(await ids(bob)).toEqual(['s1', 's2']);
    expect(await ids(eve)).toEqual(['s1']);
    expect(await ids(ops)).toEqual([]);
    const calls = async (who: { key: string }, id: string) => call(gateway.url, 'GET', `/console/api/history/${id}`, bearer(who));
    const bobs = await calls(bob, 's1');
    expect(bobs.body.calls.map((c: any) => c.arguments.text)).toEqual(['bob one']);
    // each call's recorded result is read with it, by its owner only
    expect(bobs.body.calls[0].result).toMatchObject({ success: true });
    expect(JSON.stringify((await calls(eve, 's1')).body)).not.toContain('bob one');
    const eves = await calls(eve, 's1');
    expect(eves.body.calls.map((c: any) => c.arguments.text)).toEqual(['eve one']);
    // another's session, the anonymous one, and ids no call can carry: not found, the same answer
    for (const [who, id] of [
      [ops, 's1'],
      [eve, 's2'],
      [bob, 'shared'],
      [bob, 's1%20api-key%3Abob'],
      [bob, '%25'],
      [bob, 's1 api-key:eve api-key:bob'],
    ] as const) {
      const res = await calls(who, id);
      expect({ id, status: res.status, code: res.body.code }).toEqual({ id, status: 404, code: 'NOT_FOUND' });
    }
  });

  it('keeps keys, the audit log and log tails for the admin scope', async () => {
    const before = fs.readFileSync(keysFile, 'utf8');
    for (const [method, target, body] of [
      ['GET', '/console/api/keys'],
      ['POST', '/console/api/keys', { name: 'mine', scopes: ['admin'] }],
      ['DELETE', '/console/api/keys/ops'],
      ['GET', '/console/api/audit'],
      ['GET', '/console/api/logs'],
      ['GET', '/console/api/logs/notes-mcp'],
      ['GET', '/console/api/servers'],
      ['PUT', '/console/api/servers/mine', { tools: ['note'] }],
      ['DELETE', '/console/api/servers/mine'],
    ] as const) {
      const res = await call(gateway.url, method, target, bearer(bob), body);
      expect({ target, method, status: res.status, code: res.body.code }).toEqual({ target, method, status: 403, code: 'FORBIDDEN' });
    }
    expect(fs.readFileSync(keysFile, 'utf8')).toBe(before);
    // the admin may
    expect((await call(gateway.url, 'GET', '/console/api/keys', bearer(ops))).body.keys.map((k: any) => k.name)).toEqual([
      'ops',
      'bob',
      'eve api-key:bob',
    ]);
    // virtual servers through the admin API, with the admin's own credential
    const put = await call(gateway.url, 'PUT', '/console/api/servers/mine', bearer(ops), { tools: ['note'] });
    expect(put.status).toBe(201);
    expect((await call(gateway.url, 'GET', '/console/api/servers', bearer(ops))).body.servers.map((v: any) => v.name)).toEqual(['mine']);
    expect((await call(gateway.url, 'DELETE', '/console/api/servers/mine', bearer(ops))).status).toBe(200);
    const audit = await call(gateway.url, 'GET', '/console/api/audit?who=bob', bearer(ops));
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).not.toContain('bob one');
  });

  it('tails only the log files of known services, never through a link or a path', async () => {
    const ok = await firstBytes(gateway.url, '/console/api/logs/notes-mcp', bearer(ops));
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('notes-mcp listening');
    const secret = fs.readFileSync(keysFile, 'utf8');
    for (const id of [
      'mega-orchestrator',
      '..%2Fkeys.json',
      '%2E%2E%2F%2E%2E%2Fkeys.json',
      '%2Fetc%2Fpasswd',
      'notes-mcp.log',
      'NOTES-MCP',
      'notes-mcp%00',
    ]) {
      const res = await firstBytes(gateway.url, `/console/api/logs/${id}`, bearer(ops));
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
      expect(res.text).not.toContain(ops.entry.hash);
      expect(res.text).not.toContain(secret.slice(0, 40));
    }
  });

  it('accepts new keys with known scopes and plain names only', async () => {
    const before = fs.readFileSync(keysFile, 'utf8');
    for (const body of [
      { name: 'a b', scopes: ['tools:read'] },
      { name: 'x\napi-key:ops', scopes: ['tools:read'] },
      { name: 'ops', scopes: ['tools:read'] },
      { name: 'n'.repeat(101), scopes: ['tools:read'] },
      { name: '-dash', scopes: ['tools:read'] },
      { name: 'ok', scopes: ['tools:root'] },
      { name: 'ok', scopes: ['service:../x'] },
      { name: 'ok', scopes: ['admin '] },
      { name: 'ok', scopes: [] },
      { name: 'ok', scopes: ['tools:read'], hash: `sha256:${'0'.repeat(64)}` },
    ]) {
      const res = await call(gateway.url, 'POST', '/console/api/keys', bearer(ops), body);
      expect({ body, status: res.status }).toEqual({ body, status: body.name === 'ops' ? 409 : 400 });
    }
    expect(fs.readFileSync(keysFile, 'utf8')).toBe(before);
    const made = await call(gateway.url, 'POST', '/console/api/keys', bearer(ops), {
      name: 'ci.bot@build',
      scopes: ['service:notes-mcp:read'],
    });
    expect(made.status).toBe(201);
    expect(
      (await call(gateway.url, 'POST', '/mcp', { authorization: `Bearer ${made.body.key}` }, { tool: 'note', arguments: { text: 'x' } }))
        .status,
    ).toBe(200);
  });

  it('ends a revoked key’s console sessions and bearer use at once', async () => {
    const login = await call(gateway.url, 'POST', '/console/api/login', { origin: gateway.url }, { credential: bob.key });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    expect((await call(gateway.url, 'GET', '/console/api/history', { cookie })).status).toBe(200);
    const revoked = await call(gateway.url, 'DELETE', `/console/api/keys/bob`, bearer(ops));
    expect(revoked.body).toEqual({ revoked: 'bob', consoleSessionsEnded: 1 });
    expect((await call(gateway.url, 'GET', '/console/api/history', { cookie })).status).toBe(401);
    expect((await call(gateway.url, 'GET', '/console/api/session', { cookie })).body).toMatchObject({ loggedIn: false });
    expect((await note(bob, 's3', 'after')).status).toBe(401);
    // the others are untouched
    expect((await note(eve, 's3', 'still here')).status).toBe(200);
  });
});
