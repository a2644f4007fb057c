import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { parseSkillMd } from '../src/skill-format';
import { marketplace } from './shared';

const md = (front: string, body = '# x\n') => `---\n${front}\n---\n${body}`;

describe('SKILL.md front matter (zod over YAML)', () => {
  const cases: [string, string, string, RegExp][] = [
    ['no front matter', '# just a body\n', '(front matter)', /must start with YAML front matter/],
    ['broken YAML', md('name: [unclosed\ndescription: x'), '(front matter)', /invalid YAML/],
    ['duplicate keys', md('name: a\nname: b\ndescription: x'), '(front matter)', /invalid YAML/],
    [
      'alias expansion (billion laughs)',
      md('a: &a [x, x, x]\nb: &b [*a, *a, *a]\nname: s\ndescription: *b'),
      '(front matter)',
      /invalid YAML|alias/i,
    ],
    ['missing name', md('description: x'), 'name', /expected string|Invalid input/],
    ['upper-case name', md('name: Bad_Name\ndescription: x'), 'name', /lowercase/],
    ['leading hyphen', md('name: -bad\ndescription: x'), 'name', /lowercase/],
    ['name too long', md(`name: ${'a'.repeat(65)}\ndescription: x`), 'name', /64/],
    ['empty description', md("name: s\ndescription: ''"), 'description', /1/],
    ['description too long', md(`name: s\ndescription: ${'d'.repeat(1025)}`), 'description', /1024/],
    ['non-string metadata', md('name: s\ndescription: x\nmetadata:\n  version: 1'), 'metadata.version', /string/],
    ['unknown field', md('name: s\ndescription: x\nhomepage: http://x'), 'homepage', /Unrecognized key/i],
    ['list instead of map', md('- name\n- description'), '(front matter)', /object/],
  ];
  it.each(cases)('reports %s with the file and field', (_title, text, field, message) => {
    const out = parseSkillMd(text, 's/SKILL.md');
    expect(out.frontMatter).toBeUndefined();
    expect(out.problems[0]).toEqual({ file: 's/SKILL.md', field, message: expect.stringMatching(message) });
  });

  it('accepts every optional field of the format and a BOM, and checks the name against the folder', () => {
    const ok = parseSkillMd(
      `\uFEFF${md('name: s\ndescription: x\nlicense: MIT\ncompatibility: bash\nallowed-tools: Read\nmetadata:\n  version: 1.0.0')}`,
      'f',
      's',
    );
    expect(ok.problems).toEqual([]);
    expect(ok.frontMatter).toMatchObject({ name: 's', license: 'MIT', 'allowed-tools': 'Read', metadata: { version: '1.0.0' } });
    expect(parseSkillMd(md('name: s\ndescription: x'), 'f', 'other').problems).toEqual([
      { file: 'f', field: 'name', message: expect.stringContaining('"other"') },
    ]);
  });
});

describe('a catalog folder with bad skills', () => {
  it('leaves each bad skill out of the index, names its file and field, and keeps serving the good ones', async () => {
    const { m, skillsDir, dir, cleanup } = await marketplace();
    try {
      const add = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(skillsDir, rel)), { recursive: true });
        fs.writeFileSync(path.join(skillsDir, rel), text);
      };
      add('wrong-name/SKILL.md', md('name: other-name\ndescription: x\nmetadata:\n  version: 1.0.0'));
      add('no-version/SKILL.md', md('name: no-version\ndescription: x'));
      add('bad-version/SKILL.md', md('name: bad-version\ndescription: x\nmetadata:\n  version: v1.0'));
      add('empty-folder/README.md', 'no SKILL.md here');
      add('two/1.0.0/SKILL.md', md('name: two\ndescription: x\nmetadata:\n  version: 1.0.1'));
      add('linked/SKILL.md', md('name: linked\ndescription: x\nmetadata:\n  version: 1.0.0'));
      fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside the catalog');
      fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(skillsDir, 'linked', 'escape.txt'));
      await m.catalog.reload();
      const index = await request(m.app).get('/skills/v1/index').expect(200);
      expect(index.body.result.skills.map((s: { name: string }) => s.name)).toEqual(['commit-message', 'fleet-health-check', 'sql-review']);
      const report = await request(m.app).post('/tools/catalog_validate').send({}).expect(200);
      expect(report.body.result.valid).toBe(false);
      expect(report.body.result.problems).toEqual(
        expect.arrayContaining([
          { file: 'wrong-name/SKILL.md', field: 'name', message: expect.stringContaining('"wrong-name"') },
          { file: 'no-version/SKILL.md', field: 'metadata.version', message: expect.stringContaining('required') },
          { file: 'bad-version/SKILL.md', field: 'metadata.version', message: expect.stringContaining('not a semver') },
          { file: 'empty-folder/SKILL.md', field: '(file)', message: expect.stringContaining('missing') },
          { file: 'two/1.0.0/SKILL.md', field: 'metadata.version', message: expect.stringContaining('1.0.1') },
          { file: 'linked/escape.txt', field: '(type)', message: expect.stringContaining('links') },
        ]),
      );
      const health = await request(m.app).get('/health').expect(200);
      expect(health.body.checks.catalog).toMatchObject({ status: 'error', error: expect.stringContaining('catalog_validate') });
    } finally {
      await cleanup();
    }
  });

  it('starts with a missing skills folder and says so', async () => {
    const { m, cleanup } = await marketplace({ MARKETPLACE_SKILLS_DIR: '/nonexistent/skills' });
    try {
      expect((await request(m.app).get('/skills/v1/index').expect(200)).body.result.total).toBe(0);
      expect(m.catalog.problems).toEqual([{ file: '/nonexistent/skills', field: '(folder)', message: expect.stringContaining('ENOENT') }]);
    } finally {
      await cleanup();
    }
  });
});
