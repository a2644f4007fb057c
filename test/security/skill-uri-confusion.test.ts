/**
 * Class: skill URIs that try to name something else than a file of a skill (issue 30, part 3).
 * A skill:// URI is parsed into a skill name, an optional pinned version and a safe relative path,
 * and only its canonical spelling is served, so `..`, dot segments in any encoding, encoded
 * slashes, empty segments, query or fragment parts, other schemes and names that are not skill
 * names reach nothing: -32602 (Invalid params) with the URI in data, on the marketplace and through
 * the gateway (whose first segment names the service, and which checks the rest again). A link in
 * the skills folder makes its skill unserved. The legitimate URIs keep working.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { serve } from '@mcp-fleet/testing';
import { post2026, startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { marketplace } from '../../services/marketplace-mcp/test/shared';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const SECRET = 'top-secret-outside-the-catalog';

let m: Awaited<ReturnType<typeof marketplace>>;
let server: Awaited<ReturnType<typeof serve>>;
let g: RunningGateway;
let outside: string;

beforeAll(async () => {
  m = await marketplace({ MARKETPLACE_RESCAN_MS: '0' });
  // a file outside the catalog, and a skill whose folder links to it
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'skill-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.md'), SECRET);
  fs.mkdirSync(path.join(m.skillsDir, 'linked'));
  fs.writeFileSync(
    path.join(m.skillsDir, 'linked', 'SKILL.md'),
    '---\nname: linked\ndescription: Links out.\nmetadata:\n  version: 1.0.0\n---\n# x\n',
  );
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(m.skillsDir, 'linked', 'secret.md'));
  fs.mkdirSync(path.join(m.skillsDir, 'linked-dir'));
  fs.writeFileSync(
    path.join(m.skillsDir, 'linked-dir', 'SKILL.md'),
    '---\nname: linked-dir\ndescription: Links a folder out.\nmetadata:\n  version: 1.0.0\n---\n# x\n',
  );
  fs.symlinkSync(outside, path.join(m.skillsDir, 'linked-dir', 'references'));
  server = await serve(m.m.app);
  g = await startGateway([{ id: 'marketplace-mcp', url: server.url }], path.join(m.dir, 'gw'));
});
afterAll(async () => {
  await g.stop();
  await server.stop();
  await m.cleanup();
  fs.rmSync(outside, { recursive: true, force: true });
});

/** One 2026-07-28 request to the marketplace's own POST /mcp. */
const direct = (method: string, params: Record<string, unknown>) =>
  request(m.m.app)
    .post('/mcp')
    .set({
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(method === 'resources/read' && typeof params.uri === 'string' ? { 'Mcp-Name': params.uri } : {}),
    })
    .send({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } });

const throughGateway = async (method: string, params: Record<string, unknown>) => {
  const res = await post2026(g.url, method, params, {
    headers: method === 'resources/read' && typeof params.uri === 'string' ? { 'mcp-name': params.uri } : {},
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

/** Spellings that point out of a skill, at another skill, or at nothing a skill holds. */
const HOSTILE = [
  'skill://sql-review/../commit-message/SKILL.md',
  'skill://sql-review/%2e%2e/commit-message/SKILL.md',
  'skill://sql-review/%2E%2E/%2E%2E/etc/passwd',
  'skill://sql-review/references/..%2F..%2Fcommit-message%2FSKILL.md',
  'skill://sql-review/references%2Fchecklist.md',
  'skill://sql-review//SKILL.md',
  'skill://sql-review/./SKILL.md',
  'skill://sql-review/%2e/SKILL.md',
  'skill://SQL-REVIEW/SKILL.md',
  'skill://sql-review/SKILL.md?x=1',
  'skill://sql-review/SKILL.md#top',
  'skill://sql-review/references\\checklist.md',
  'skill://sql-review/%00SKILL.md',
  'skill://sql-review/SKILL.md/',
  'skill:///etc/passwd',
  'skill://../../etc/passwd',
  'skill://v1.0.0/../sql-review/SKILL.md',
  'skill://v1.0.0/commit-message/../../sql-review/SKILL.md',
  'file:///etc/passwd',
  `skill://sql-review/${'a/'.repeat(1500)}SKILL.md`,
  'skill://linked/SKILL.md',
  'skill://linked/secret.md',
  'skill://linked-dir/SKILL.md',
  'skill://linked-dir/references/secret.md',
];

describe('skill URIs reach only the files of a skill', () => {
  it('marketplace: every hostile spelling is -32602 for resources/read, skills/get and directory reads; nothing outside is answered', async () => {
    for (const uri of HOSTILE)
      for (const method of ['resources/read', 'skills/get', 'resources/directory/read']) {
        const res = await direct(method, { uri });
        expect([uri, method, res.body.error?.code]).toEqual([uri, method, -32602]);
        expect(res.body.result).toBeUndefined();
        expect(JSON.stringify(res.body)).not.toContain(SECRET);
      }
    // the REST side the gateway reads answers the same: not found
    for (const uri of HOSTILE.slice(0, 6)) expect((await request(m.m.app).post('/resources/read').send({ uri })).status).toBe(404);
  });

  it('marketplace: a skill holding a link (to a file or a folder) is left out of the catalog, named with its file; the others are served', async () => {
    const listed = (await direct('skills/list', {})).body.result.skills.map((s: { uri: string }) => s.uri);
    expect(listed).not.toContain('skill://linked/SKILL.md');
    expect(m.m.catalog.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'linked/secret.md', message: expect.stringMatching(/links/) }),
        expect.objectContaining({ file: 'linked-dir/references', message: expect.stringMatching(/links/) }),
      ]),
    );
    expect(listed).toEqual(['skill://commit-message/SKILL.md', 'skill://fleet-health-check/SKILL.md', 'skill://sql-review/SKILL.md']);
    const read = await direct('resources/read', { uri: 'skill://sql-review/references/checklist.md' });
    expect(read.body.result.contents[0].text).toMatch(/^# Checklist/);
    expect((await direct('skills/get', { uri: 'skill://v1.0.0/commit-message/SKILL.md' })).body.result.skill.uri).toBe(
      'skill://v1.0.0/commit-message/SKILL.md',
    );
  });

  it('gateway: the same spellings under skill://marketplace-mcp/ (and ones that leave the namespace) reach nothing; the legitimate ones work', async () => {
    const hostile = [
      ...HOSTILE.filter((u) => u.startsWith('skill://') && !u.startsWith('skill:///')).map((u) =>
        u.replace('skill://', 'skill://marketplace-mcp/'),
      ),
      'skill://marketplace-mcp/../marketplace-mcp/sql-review/SKILL.md',
      'skill://marketplace-mcp/%2e%2e/x/SKILL.md',
      'skill://marketplace-mcp',
      'skill://marketplace-mcp/',
      'skill://MARKETPLACE-MCP/sql-review/SKILL.md',
    ];
    for (const uri of hostile)
      for (const method of ['resources/read', 'skills/get', 'resources/directory/read']) {
        const res = await throughGateway(method, { uri });
        expect([uri, method, res.body.error?.code]).toEqual([uri, method, -32602]);
        expect(JSON.stringify(res.body)).not.toContain(SECRET);
      }
    const ok = await throughGateway('resources/read', { uri: 'skill://marketplace-mcp/sql-review/references/checklist.md' });
    expect(ok.body.result.contents[0]).toMatchObject({
      uri: 'skill://marketplace-mcp/sql-review/references/checklist.md',
      mimeType: 'text/markdown',
    });
    expect((await throughGateway('skills/get', { uri: 'skill://marketplace-mcp/sql-review/SKILL.md' })).body.result.skill.uri).toBe(
      'skill://marketplace-mcp/sql-review/SKILL.md',
    );
  });
});
