/** Skills as MCP prompts: GET /prompts/list and POST /prompts/get (the kit's prompt convention). */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { MarketplaceApp } from '../src/app';
import { parseSkillArguments } from '../src/skill-format';
import { marketplace, rawArchive, skillMd } from './shared';

let m: MarketplaceApp;
let skillsDir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ m, skillsDir, cleanup } = await marketplace());
});
afterAll(() => cleanup());

const get = (name: string, args?: Record<string, unknown>) =>
  request(m.app)
    .post('/prompts/get')
    .send({ name, ...(args ? { arguments: args } : {}) });

const publish = async (name: string, version: string, extra = '', body = '') => {
  const md = skillMd(name, version, extra) + body;
  await m.catalog.publish(name, version, await rawArchive([{ name: `${name}/SKILL.md`, data: md }]));
};

describe('skills as prompts', () => {
  it('lists one prompt per skill: its name, description, and an optional free-text argument when it declares none', async () => {
    const res = await request(m.app).get('/prompts/list').expect(200);
    expect(res.body.service).toBe('marketplace-mcp');
    expect(res.body.prompts.map((p: { name: string }) => p.name)).toEqual(['commit-message', 'fleet-health-check', 'sql-review']);
    const sql = res.body.prompts[2];
    expect(sql).toEqual({
      name: 'sql-review',
      title: 'sql-review',
      description: expect.stringMatching(/^Review SQL migrations/),
      arguments: [{ name: 'input', description: expect.stringMatching(/free text/), required: false }],
    });
  });

  it("gets the latest release's SKILL.md body as one user message, the free text appended", async () => {
    const plain = await get('sql-review').expect(200);
    expect(plain.body.description).toMatch(/^sql-review@0\.3\.0: Review SQL/);
    expect(plain.body.messages).toHaveLength(1);
    expect(plain.body.messages[0].role).toBe('user');
    const text: string = plain.body.messages[0].content.text;
    expect(text.startsWith('# SQL review')).toBe(true);
    expect(text).not.toMatch(/^---/m);
    const withInput = await get('sql-review', { input: 'migrations/042_users.sql' }).expect(200);
    expect(withInput.body.messages[0].content.text).toBe(`${text}\n\n---\n\nmigrations/042_users.sql`);
    // commit-message: 1.1.0 is the latest release (2.0.0-beta.1 is a prerelease).
    expect((await get('commit-message').expect(200)).body.description).toMatch(/^commit-message@1\.1\.0:/);
  });

  it('declared arguments: listed with required flags, {{placeholders}} substituted, unused ones appended', async () => {
    await publish(
      'table-audit',
      '1.0.0',
      '  arguments: "table: the table to audit, dialect?: postgres or sqlite, note?"\n  title: Audit a table\n',
      'Audit {{ table }} for {{dialect}}. Leave {{other}} alone.\n',
    );
    const list = await request(m.app).get('/prompts/list').expect(200);
    expect(list.body.prompts.find((p: { name: string }) => p.name === 'table-audit')).toEqual({
      name: 'table-audit',
      title: 'Audit a table',
      description: 'A test skill called table-audit.',
      arguments: [
        { name: 'table', description: 'the table to audit', required: true },
        { name: 'dialect', description: 'postgres or sqlite', required: false },
        { name: 'note', required: false },
      ],
    });
    const got = await get('table-audit', { table: 'users', note: 'be brief' }).expect(200);
    expect(got.body.messages[0].content.text).toBe(
      '# table-audit\n\nBody of table-audit 1.0.0.\nAudit users for . Leave {{other}} alone.\n\n---\n\nArguments:\n- note: be brief',
    );
  });

  it('refuses a missing required argument, an undeclared one, non-string values and an unknown prompt', async () => {
    const missing = await get('table-audit', { dialect: 'postgres' }).expect(400);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/table is required/) });
    const unknown = await get('sql-review', { table: 'x' }).expect(400);
    expect(unknown.body.error).toMatch(/table is not one of its arguments.*input \(optional\)/);
    expect((await get('sql-review', { input: 5 }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await request(m.app).post('/prompts/get').send({}).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await get('no-such-skill').expect(404)).body).toMatchObject({
      code: 'NOT_FOUND',
      error: expect.stringMatching(/no-such-skill/),
    });
  });

  it('a newly published version is the prompt at once; a new skill in the folder after a reload', async () => {
    await publish('table-audit', '1.1.0', '  arguments: "table"\n', 'Now {{table}}.\n');
    const got = await get('table-audit', { table: 'orders' }).expect(200);
    expect(got.body.description).toMatch(/^table-audit@1\.1\.0:/);
    expect(got.body.messages[0].content.text).toMatch(/Now orders\.$/);
    fs.mkdirSync(path.join(skillsDir, 'late-skill'));
    fs.writeFileSync(path.join(skillsDir, 'late-skill', 'SKILL.md'), skillMd('late-skill', '0.1.0'));
    await m.catalog.reload();
    const list = await request(m.app).get('/prompts/list').expect(200);
    expect(list.body.prompts.map((p: { name: string }) => p.name)).toContain('late-skill');
  });
});

describe('metadata.arguments', () => {
  it('parses names, optional marks and descriptions, and reports malformed or repeated entries', () => {
    expect(parseSkillArguments('a, b?: the b ,c?', 'f').args).toEqual([
      { name: 'a', required: true },
      { name: 'b', required: false, description: 'the b' },
      { name: 'c', required: false },
    ]);
    expect(parseSkillArguments(undefined, 'f')).toEqual({ args: [], problems: [] });
    expect(parseSkillArguments('a, a', 'f').problems[0]).toMatchObject({
      field: 'metadata.arguments',
      message: expect.stringMatching(/twice/),
    });
    expect(parseSkillArguments('bad name!', 'f').problems[0].message).toMatch(/is not "name"/);
  });

  it('a skill with a malformed declaration is refused at publish, naming the field', async () => {
    await expect(publish('broken-args', '1.0.0', '  arguments: "x y"\n')).rejects.toThrow(/metadata.arguments/);
  });
});
