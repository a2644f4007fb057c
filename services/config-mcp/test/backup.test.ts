import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { makeApp } from './helpers';

const h = makeApp({ env: { BACKUP_KEEP: '3' } });
afterAll(() => h.close());

const call = (args: unknown) =>
  request(h.app)
    .post('/tools/backup')
    .send(args as object);
const pause = () => new Promise((r) => setTimeout(r, 5));

describe('backup', () => {
  it('creates timestamped copies under DATA_DIR, lists them newest first and keeps BACKUP_KEEP', async () => {
    h.write('conf/app.yaml', 'version: 0\n');
    const ids: string[] = [];
    for (let v = 1; v <= 5; v++) {
      h.write('conf/app.yaml', `version: ${v}\n`);
      const res = await call({ action: 'create', path: 'conf/app.yaml' }).expect(200);
      expect(res.body.result.backup).toMatchObject({ bytes: `version: ${v}\n`.length });
      expect(new Date(res.body.result.backup.createdAt).toISOString()).toBe(res.body.result.backup.createdAt);
      ids.push(res.body.result.backup.id);
      await pause();
    }
    const list = await call({ action: 'list', path: 'conf/app.yaml' }).expect(200);
    expect(list.body.result.backups.map((b: { id: string }) => b.id)).toEqual([ids[4], ids[3], ids[2]]);
    expect(list.body.result.total).toBe(3);

    const stored = fs.readdirSync(path.join(h.dataDir, 'config-mcp', 'backups'));
    expect(stored).toHaveLength(1);
    const copies = fs.readdirSync(path.join(h.dataDir, 'config-mcp', 'backups', stored[0])).filter((n) => n !== 'source.json');
    expect(copies.sort()).toEqual([ids[2], ids[3], ids[4]].sort());
    expect(fs.readFileSync(path.join(h.dataDir, 'config-mcp', 'backups', stored[0], ids[4]), 'utf8')).toBe('version: 5\n');
  });

  it('restores a backup atomically after backing up the current file', async () => {
    h.write('svc.json', '{"v": 1}');
    const first = (await call({ action: 'create', path: 'svc.json' }).expect(200)).body.result.backup.id;
    h.write('svc.json', '{"v": 2, "broken": ');
    await pause();
    const res = await call({ action: 'restore', path: 'svc.json', id: first }).expect(200);
    expect(res.body.result).toMatchObject({ restored: first, bytes: 8 });
    expect(h.read('svc.json')).toBe('{"v": 1}');
    const previous = res.body.result.previousBackup;
    expect(previous).toEqual(expect.any(String));
    await pause();
    await call({ action: 'restore', path: 'svc.json', id: previous }).expect(200);
    expect(h.read('svc.json')).toBe('{"v": 2, "broken": ');
  });

  it('restores a file that was deleted', async () => {
    h.write('gone.toml', 'a = 1\n');
    const id = (await call({ action: 'create', path: 'gone.toml' }).expect(200)).body.result.backup.id;
    fs.rmSync(path.join(h.workspace, 'gone.toml'));
    const res = await call({ action: 'restore', path: 'gone.toml', id }).expect(200);
    expect(res.body.result.previousBackup).toBeNull();
    expect(h.read('gone.toml')).toBe('a = 1\n');
  });

  it('prunes to the requested count and paginates the list', async () => {
    h.write('many.toml', 'a = 1\n');
    for (let i = 0; i < 4; i++) {
      await call({ action: 'create', path: 'many.toml', keep: 10 }).expect(200);
      await pause();
    }
    const page = await call({ action: 'list', path: 'many.toml', limit: 2 }).expect(200);
    expect(page.body.result.backups).toHaveLength(2);
    const rest = await call({ action: 'list', path: 'many.toml', limit: 2, cursor: page.body.result.nextCursor }).expect(200);
    expect(rest.body.result.backups).toHaveLength(2);
    expect(rest.body.result.backups[0].createdAt < page.body.result.backups[1].createdAt).toBe(true);
    const pruned = await call({ action: 'prune', path: 'many.toml', keep: 1 }).expect(200);
    expect(pruned.body.result).toMatchObject({ kept: 1 });
    expect(pruned.body.result.pruned).toHaveLength(3);
    expect((await call({ action: 'list', path: 'never-backed-up.json' }).expect(200)).body.result.backups).toEqual([]);
  });

  it('answers bad input, missing files and unknown backups with documented codes', async () => {
    h.write('x.json', '{}');
    await call({ action: 'create', path: 'missing.json' }).expect(404);
    await call({ action: 'create', path: '../outside.json' }).expect(403);
    await call({ action: 'create', path: '/etc/passwd' }).expect(403);
    fs.mkdirSync(path.join(h.workspace, 'a-dir'));
    await call({ action: 'create', path: 'a-dir' }).expect(400);
    await call({ action: 'restore', path: 'x.json' }).expect(400);
    await call({ action: 'restore', path: 'x.json', id: '../../etc/passwd' }).expect(400);
    const unknown = await call({ action: 'restore', path: 'x.json', id: '2020-01-01T00-00-00.000Z' }).expect(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    await call({ action: 'create', path: 'x.json', id: '2020-01-01T00-00-00.000Z' }).expect(400);
    await call({ action: 'prune', path: 'x.json', keep: 0 }).expect(400);
    await call({ action: 'explode', path: 'x.json' }).expect(400);
  });
});
