import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import request from 'supertest';
import type { MarketplaceApp } from '../src/app';
import { binary, marketplace, rawArchive, skillMd } from './shared';

const SECRET = 'marketplace-shared-secret-0123456789abcdef';
const ADMIN = 'marketplace-admin-credential-01';
const key = new TextEncoder().encode(SECRET);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Signed as security-mcp's jwt_token signs: HS256, iss, sub, iat, exp, jti and a space-separated scope. */
async function token(scope: string, opts: { issuer?: string; secret?: Uint8Array; expiresIn?: number; audience?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  let b = new SignJWT({ scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('tester')
    .setIssuer(opts.issuer ?? 'mcp-fleet')
    .setIssuedAt(now - 10)
    .setExpirationTime(now + (opts.expiresIn ?? 600))
    .setJti('t1');
  if (opts.audience) b = b.setAudience(opts.audience);
  return b.sign(opts.secret ?? key);
}

describe('auth on (JWT_SECRET set)', () => {
  let m: MarketplaceApp;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ m, cleanup } = await marketplace({ JWT_SECRET: SECRET, JWT_AUDIENCE: 'marketplace', MARKETPLACE_ADMIN_TOKEN: ADMIN }));
  });
  afterAll(() => cleanup());

  const routes: [string, string, object?][] = [
    ['get', '/skills/v1/index'],
    ['get', '/skills/v1/packages/sql-review/0.3.0'],
    ['get', '/skills/v1/packages/sql-review/0.3.0/download'],
    ['post', '/skills/v1/install-plan', { skills: ['sql-review'] }],
    ['get', '/registry/v0.1/servers'],
    ['get', '/registry/v0.1/servers/io.mcp-fleet%2Fmemory-mcp'],
    ['get', '/registry/v0.1/servers/io.mcp-fleet%2Fmemory-mcp/versions'],
    ['get', '/registry/v0.1/servers/io.mcp-fleet%2Fmemory-mcp/latest'],
    ['get', '/tools/list'],
    ['post', '/tools/skills_list', {}],
    ['post', '/mcp', { jsonrpc: '2.0', id: 1, method: 'ping' }],
    ['get', '/metrics'],
  ];
  const call = (method: string, url: string, body?: object, auth?: string) => {
    let r =
      method === 'get'
        ? request(m.app).get(url)
        : request(m.app)
            .post(url)
            .send(body ?? {});
    r = r.set('accept', 'application/json, text/event-stream');
    return auth ? r.set('authorization', auth) : r;
  };

  it('/health stays open and says auth is on', async () => {
    const res = await request(m.app).get('/health').expect(200);
    expect(res.body.checks.auth.detail).toMatchObject({
      mode: 'jwt',
      requiredScope: 'market:read',
      issuer: 'mcp-fleet',
      audience: 'marketplace',
    });
  });

  it.each(routes)(
    '%s %s: 401 with WWW-Authenticate without a good token, 403 with a wrong scope, 200 with market:read',
    async (...[method, url, body]) => {
      const missing = await call(method, url, body).expect(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="marketplace", error="invalid_request"');
      expect(missing.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
      const bad = [
        'Bearer not.a.jwt',
        `Bearer ${await token('market:read', { secret: new TextEncoder().encode('another-secret-of-enough-length-000000') })}`,
        `Bearer ${await token('market:read', { issuer: 'someone-else', audience: 'marketplace' })}`,
        `Bearer ${await token('market:read', { audience: 'other' })}`,
        `Bearer ${await token('market:read', { expiresIn: -60, audience: 'marketplace' })}`,
        `Basic ${Buffer.from('a:b').toString('base64')}`,
      ];
      for (const auth of bad) {
        const res = await call(method, url, body, auth).expect(401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="marketplace", error="invalid_(token|request)"$/);
      }
      const wrong = await call(method, url, body, `Bearer ${await token('market:write other', { audience: 'marketplace' })}`).expect(403);
      expect(wrong.body.code).toBe('FORBIDDEN');
      expect(wrong.headers['www-authenticate']).toContain('error="insufficient_scope", scope="market:read"');
      const ok = await call(method, url, body, `Bearer ${await token('market:read', { audience: 'marketplace' })}`);
      expect(ok.status).toBe(200);
    },
  );

  it('says why an expired token is refused', async () => {
    const res = await call(
      'get',
      '/skills/v1/index',
      undefined,
      `Bearer ${await token('market:read', { expiresIn: -60, audience: 'marketplace' })}`,
    ).expect(401);
    expect(res.body.error).toMatch(/expired/);
  });

  it('publishing needs market:write and the admin credential', async () => {
    const archive = await rawArchive([{ name: 'SKILL.md', data: skillMd('new-skill', '1.0.0') }]);
    const put = (headers: Record<string, string>) => {
      const r = request(m.app).put('/skills/v1/packages/new-skill/1.0.0').set('content-type', 'application/gzip');
      for (const [k, v] of Object.entries(headers)) r.set(k, v);
      return r.send(archive);
    };
    expect((await put({ 'x-admin-token': ADMIN }).expect(401)).headers['www-authenticate']).toContain('Bearer');
    const read = `Bearer ${await token('market:read', { audience: 'marketplace' })}`;
    expect((await put({ authorization: read, 'x-admin-token': ADMIN }).expect(403)).headers['www-authenticate']).toContain(
      'scope="market:write"',
    );
    const write = `Bearer ${await token('market:read market:write', { audience: 'marketplace' })}`;
    expect((await put({ authorization: write }).expect(403)).body.error).toMatch(/X-Admin-Token/);
    expect((await put({ authorization: write, 'x-admin-token': 'wrong-credential-0000' }).expect(403)).body.code).toBe('FORBIDDEN');
    const created = await put({ authorization: write, 'x-admin-token': ADMIN }).expect(201);
    expect(created.body.result).toMatchObject({
      created: true,
      name: 'new-skill',
      version: '1.0.0',
      sha256: expect.stringMatching(/^[a-f0-9]{64}$/),
    });
  });
});

describe('auth off', () => {
  it('serves every route without a token and says so in /health; publishing is NOT_CONFIGURED without an admin credential', async () => {
    const { m, cleanup } = await marketplace();
    try {
      const health = await request(m.app).get('/health').expect(200);
      expect(health.body.checks.auth.detail).toMatchObject({ mode: 'open', warning: expect.stringContaining('JWT_SECRET is not set') });
      await request(m.app).get('/skills/v1/index').expect(200);
      await request(m.app).get('/registry/v0.1/servers').expect(200);
      const archive = await rawArchive([{ name: 'SKILL.md', data: skillMd('x', '1.0.0') }]);
      const res = await request(m.app).put('/skills/v1/packages/x/1.0.0').set('content-type', 'application/gzip').send(archive).expect(503);
      expect(res.body).toMatchObject({ code: 'NOT_CONFIGURED', error: expect.stringContaining('MARKETPLACE_ADMIN_TOKEN') });
    } finally {
      await cleanup();
    }
  });
});

describe('publishing (auth off, admin credential set)', () => {
  let m: MarketplaceApp;
  let dir: string;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  beforeAll(async () => {
    ({ m, dir, cleanup } = await marketplace({ MARKETPLACE_ADMIN_TOKEN: ADMIN }));
    env = { MARKETPLACE_ADMIN_TOKEN: ADMIN, DATA_DIR: path.join(dir, 'data') };
  });
  afterAll(() => cleanup());

  const publish = (name: string, version: string, archive: Buffer, app = m.app) =>
    request(app)
      .put(`/skills/v1/packages/${name}/${version}`)
      .set('content-type', 'application/gzip')
      .set('x-admin-token', ADMIN)
      .send(archive);

  it('adds a version, repacked reproducibly; the same bytes again are a no-op, other bytes are CONFLICT', async () => {
    const archive = await rawArchive([
      { name: 'pub-skill/', type: 'directory' },
      { name: 'pub-skill/SKILL.md', data: skillMd('pub-skill', '1.0.0') },
      { name: 'pub-skill/run.sh', data: '#!/bin/sh\necho hi\n', mode: 0o755 },
    ]);
    const first = await publish('pub-skill', '1.0.0', archive).expect(201);
    const meta = await request(m.app).get('/skills/v1/packages/pub-skill/1.0.0').expect(200);
    expect(meta.body.result).toMatchObject({ source: 'published', latest: true, dist: { sha256: first.body.result.sha256 } });
    expect(meta.body.result.files.map((f: { path: string; executable: boolean }) => [f.path, f.executable])).toEqual([
      ['SKILL.md', false],
      ['run.sh', true],
    ]);
    const body = (await request(m.app).get('/skills/v1/packages/pub-skill/1.0.0/download').buffer(true).parse(binary).expect(200))
      .body as Buffer;
    expect(sha(body)).toBe(first.body.result.sha256);
    // The same files in another archive (other order, times, no folder prefix) are the same version.
    const same = await rawArchive([
      { name: 'run.sh', data: '#!/bin/sh\necho hi\n', mode: 0o700 },
      { name: 'SKILL.md', data: skillMd('pub-skill', '1.0.0') },
    ]);
    expect((await publish('pub-skill', '1.0.0', same).expect(200)).body.result).toMatchObject({
      created: false,
      sha256: first.body.result.sha256,
    });
    const other = await rawArchive([{ name: 'SKILL.md', data: skillMd('pub-skill', '1.0.0', 'license: MIT\n') }]);
    const conflict = await publish('pub-skill', '1.0.0', other).expect(409);
    expect(conflict.body).toMatchObject({ code: 'CONFLICT', error: expect.stringContaining('immutable') });
    expect((await request(m.app).get('/skills/v1/packages/pub-skill/1.0.0').expect(200)).body.result.dist.sha256).toBe(
      first.body.result.sha256,
    );
    // A version of a catalog skill is as immutable as a published one.
    const catalogClash = await rawArchive([{ name: 'SKILL.md', data: skillMd('sql-review', '0.3.0') }]);
    expect((await publish('sql-review', '0.3.0', catalogClash).expect(409)).body.code).toBe('CONFLICT');
    // A newer version becomes latest; a prerelease does not.
    await publish('pub-skill', '1.1.0', await rawArchive([{ name: 'SKILL.md', data: skillMd('pub-skill', '1.1.0') }])).expect(201);
    await publish(
      'pub-skill',
      '2.0.0-alpha.1',
      await rawArchive([{ name: 'SKILL.md', data: skillMd('pub-skill', '2.0.0-alpha.1') }]),
    ).expect(201);
    expect((await request(m.app).get('/skills/v1/index?search=pub-skill').expect(200)).body.result.skills[0].latest).toBe('1.1.0');
  });

  it('yanks a version: ranges and latest skip it, an exact pin still installs it, durably; DELETE takes it back', async () => {
    const yank = (version: string, body?: object, admin = ADMIN) => {
      const r = request(m.app).put(`/skills/v1/packages/pub-skill/${version}/yank`);
      if (admin) r.set('x-admin-token', admin);
      return body ? r.send(body) : r;
    };
    const unyank = (version: string) => request(m.app).delete(`/skills/v1/packages/pub-skill/${version}/yank`).set('x-admin-token', ADMIN);
    const resolve = async (version: string) =>
      (await request(m.app).post('/tools/skills_resolve').send({ name: 'pub-skill', version })).body;

    // refused without the admin credential, for an unknown version, with a bad body
    expect((await yank('1.1.0', undefined, '').expect(403)).body.code).toBe('FORBIDDEN');
    expect((await yank('1.1.0', undefined, 'wrong-credential-0000').expect(403)).body.code).toBe('FORBIDDEN');
    expect((await yank('9.9.9').expect(404)).body.error).toMatch(/pub-skill@9\.9\.9 is not in the catalog/);
    expect((await yank('1.1.0', { reason: '' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await yank('1.1.0', { why: 'x' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await resolve('latest')).result.version).toBe('1.1.0');

    const done = await yank('1.1.0', { reason: 'leaks a token in run.sh' }).expect(200);
    expect(done.body.result).toMatchObject({
      changed: true,
      version: '1.1.0',
      yanked: { reason: 'leaks a token in run.sh' },
      latest: '1.0.0',
    });
    expect((await yank('1.1.0', { reason: 'leaks a token in run.sh' }).expect(200)).body.result.changed).toBe(false);

    expect((await resolve('latest')).result).toMatchObject({ version: '1.0.0', yanked: false, latest: true });
    expect((await resolve('^1.0.0')).result.version).toBe('1.0.0');
    // an exact pin still resolves, marked; its archive still downloads
    expect((await resolve('1.1.0')).result).toMatchObject({
      version: '1.1.0',
      yanked: { reason: 'leaks a token in run.sh' },
      latest: false,
    });
    await request(m.app).get('/skills/v1/packages/pub-skill/1.1.0/download').expect(200);
    const index = (await request(m.app).get('/skills/v1/index?search=pub-skill').expect(200)).body.result.skills[0];
    expect(index.latest).toBe('1.0.0');
    expect(index.versions.find((v: { version: string }) => v.version === '1.1.0').yanked).toBe(true);
    const plan = await request(m.app)
      .post('/skills/v1/install-plan')
      .send({ skills: [{ name: 'pub-skill', range: '1.1.0' }, 'sql-review'], target: 'skills' })
      .expect(200);
    expect(plan.body.result.install[0]).toMatchObject({ version: '1.1.0', yanked: { reason: 'leaks a token in run.sh' } });
    const ranged = await request(m.app)
      .post('/skills/v1/install-plan')
      .send({ skills: [{ name: 'pub-skill', range: '>1.0.0 <2' }] })
      .expect(200);
    expect(ranged.body.result.unsatisfiable).toEqual([
      expect.objectContaining({ name: 'pub-skill', available: ['2.0.0-alpha.1', '1.0.0'] }),
    ]);

    // after a restart the yank holds
    const again = await marketplace(env);
    try {
      expect(again.m.catalog.latest('pub-skill')?.version).toBe('1.0.0');
      expect(again.m.catalog.versions('pub-skill').find((v) => v.version === '1.1.0')?.yanked).toMatchObject({
        reason: 'leaks a token in run.sh',
      });
    } finally {
      await again.cleanup();
    }
    expect((await unyank('1.1.0').expect(200)).body.result).toMatchObject({ changed: true, yanked: false, latest: '1.1.0' });
    expect((await unyank('1.1.0').expect(200)).body.result.changed).toBe(false);
    expect((await resolve('^1.0.0')).result.version).toBe('1.1.0');
  });

  it('reloads the skills folder on POST /skills/v1/reload (admin only)', async () => {
    const folder = path.join(m.catalog.skillsDir, 'late-skill');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'SKILL.md'), skillMd('late-skill', '0.1.0'));
    try {
      await request(m.app).get('/skills/v1/packages/late-skill/0.1.0').expect(404);
      expect((await request(m.app).post('/skills/v1/reload').expect(403)).body.code).toBe('FORBIDDEN');
      const res = await request(m.app).post('/skills/v1/reload').set('x-admin-token', ADMIN).expect(200);
      expect(res.body.result).toMatchObject({ skills: expect.any(Number), problems: [] });
      await request(m.app).get('/skills/v1/packages/late-skill/0.1.0').expect(200);
      // published versions and yanks survive a reload
      expect(m.catalog.versions('pub-skill').length).toBe(3);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('keeps published versions across a restart and refuses a stored archive that was tampered with', async () => {
    const again = await marketplace(env);
    try {
      expect(again.m.catalog.versions('pub-skill').map((v) => v.version)).toEqual(['2.0.0-alpha.1', '1.1.0', '1.0.0']);
    } finally {
      await again.cleanup();
    }
    const stored = path.join(dir, 'data', 'marketplace', 'packages', 'pub-skill', '1.1.0.tar.gz');
    const original = fs.readFileSync(stored);
    fs.writeFileSync(stored, Buffer.concat([original, Buffer.from('x')]));
    const tampered = await marketplace(env);
    try {
      expect(tampered.m.catalog.versions('pub-skill').map((v) => v.version)).toEqual(['2.0.0-alpha.1', '1.0.0']);
      expect(tampered.m.catalog.problems).toEqual([
        { file: 'published/pub-skill/1.1.0.tar.gz', field: 'sha256', message: expect.stringContaining('digest') },
      ]);
    } finally {
      fs.writeFileSync(stored, original);
      await tampered.cleanup();
    }
  });

  it.each([
    ['an absolute path', [{ name: '/etc/evil', data: 'x' }], /escapes the skill folder/],
    [
      'a ".." path',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'a/../../evil', data: 'x' },
      ],
      /escapes the skill folder/,
    ],
    [
      'a symlink',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'link', type: 'symlink', linkname: '/etc/passwd' },
      ],
      /symlink/,
    ],
    [
      'a hard link',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'hard', type: 'link', linkname: 'SKILL.md' },
      ],
      /link/,
    ],
    [
      'a character device',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'null', type: 'character-device' },
      ],
      /character-device/,
    ],
    [
      'a FIFO',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'pipe', type: 'fifo' },
      ],
      /fifo/,
    ],
    [
      'a duplicate path',
      [
        { name: 'SKILL.md', data: skillMd('hostile', '1.0.0') },
        { name: 'SKILL.md', data: 'again' },
      ],
      /twice/,
    ],
    ['no SKILL.md', [{ name: 'README.md', data: 'x' }], /SKILL\.md/],
    ['a name that is not the route name', [{ name: 'SKILL.md', data: skillMd('someone-else', '1.0.0') }], /name/],
    ['another version in the front matter', [{ name: 'SKILL.md', data: skillMd('hostile', '9.9.9') }], /metadata\.version/],
    ['bad front matter', [{ name: 'SKILL.md', data: '---\nname: hostile\n---\n' }], /description/],
  ] as const)('refuses an archive with %s (VALIDATION_ERROR) and stores nothing', async (_title, entries, message) => {
    const res = await publish('hostile', '1.0.0', await rawArchive([...entries])).expect(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(message) });
    expect(m.catalog.versions('hostile')).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'data', 'marketplace', 'packages', 'hostile'))).toBe(false);
  });

  it('refuses bad names, versions, bodies and oversize archives with clear codes', async () => {
    const ok = await rawArchive([{ name: 'SKILL.md', data: skillMd('fine', '1.0.0') }]);
    expect((await publish('Bad_Name', '1.0.0', ok).expect(400)).body.details[0].path).toBe('name');
    expect((await publish('fine', '^1.0.0', ok).expect(400)).body.details[0].path).toBe('version');
    expect((await publish('fine', 'v1.0.0', ok).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await publish('fine', '1.0.0', Buffer.from('not gzip at all')).expect(400)).body.error).toMatch(/gzip/);
    const empty = await request(m.app).put('/skills/v1/packages/fine/1.0.0').set('x-admin-token', ADMIN).expect(400);
    expect(empty.body.code).toBe('VALIDATION_ERROR');
    const small = await marketplace({ MARKETPLACE_ADMIN_TOKEN: ADMIN, MARKETPLACE_MAX_ARCHIVE_BYTES: '2048' });
    try {
      const big = await rawArchive([
        { name: 'SKILL.md', data: skillMd('fine', '1.0.0') },
        { name: 'zeros', data: '\0'.repeat(100_000) },
      ]);
      const res = await publish('fine', '1.0.0', big, small.m.app).expect(413);
      expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      await small.cleanup();
    }
  });

  it('keeps the index pages stable while versions and skills are published between them', async () => {
    const names = ['page-a', 'page-c', 'page-e', 'page-g'];
    for (const n of names) await publish(n, '1.0.0', await rawArchive([{ name: 'SKILL.md', data: skillMd(n, '1.0.0') }])).expect(201);
    const seen: string[] = [];
    let cursor: string | undefined;
    let round = 0;
    do {
      const res = await request(m.app)
        .get(`/skills/v1/index?search=page-&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .expect(200);
      seen.push(...res.body.result.skills.map((s: { name: string }) => s.name));
      cursor = res.body.result.nextCursor;
      // Between pages: a new version of a skill already served, a new skill before the cursor and one after it.
      round++;
      await publish(`page-a`, `1.${round}.0`, await rawArchive([{ name: 'SKILL.md', data: skillMd('page-a', `1.${round}.0`) }])).expect(
        201,
      );
      await publish(`page-0${round}`, '1.0.0', await rawArchive([{ name: 'SKILL.md', data: skillMd(`page-0${round}`, '1.0.0') }])).expect(
        201,
      );
      if (round === 1)
        await publish('page-z', '1.0.0', await rawArchive([{ name: 'SKILL.md', data: skillMd('page-z', '1.0.0') }])).expect(201);
    } while (cursor);
    // Every skill present from the start is seen exactly once; the one added after the cursor is seen too.
    expect(seen).toEqual([...names, 'page-z']);
  });
});
