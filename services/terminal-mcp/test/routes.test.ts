import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import type { ServiceApp } from '@mcp-fleet/kit';
import { buildApp } from './helpers';

describe('terminal-mcp routes and inspection tools', () => {
  const ws = tempDir('terminal-routes-');
  const outside = tempDir('terminal-routes-out-');
  let service: ServiceApp;

  beforeAll(async () => {
    fs.mkdirSync(path.join(ws.dir, 'dir', 'child'), { recursive: true });
    for (let i = 0; i < 7; i++) fs.writeFileSync(path.join(ws.dir, 'dir', `f${i}.txt`), 'x'.repeat(i));
    fs.symlinkSync('f1.txt', path.join(ws.dir, 'dir', 'link'));
    service = await buildApp(ws.dir);
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
    outside.cleanup();
  });

  it('lists its four tools with zod-generated schemas and annotations', async () => {
    const res = await request(service.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['execute_command', 'directory', 'processes', 'system_info']);
    const exec = res.body.tools.find((t: { name: string }) => t.name === 'execute_command');
    expect(exec.inputSchema).toMatchObject({
      type: 'object',
      required: ['command'],
      additionalProperties: false,
      properties: { timeoutMs: { maximum: 8000 }, args: { type: 'array' } },
    });
    expect(exec.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(exec.description).toContain('without a shell');
  });

  it('serves health', async () => {
    const res = await request(service.app).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'healthy',
      service: 'terminal-mcp',
      tools: 4,
      checks: { workspace: { detail: { shell: false } } },
    });
  });

  describe('directory', () => {
    it('lists entries with type, size and modification time, sorted by name', async () => {
      const res = await request(service.app).get('/directory').query({ path: 'dir' }).expect(200);
      const { entries, total, path: p } = res.body.result;
      expect(p).toBe('dir');
      expect(total).toBe(9);
      expect(entries.map((e: { name: string }) => e.name)).toEqual([
        'child',
        'f0.txt',
        'f1.txt',
        'f2.txt',
        'f3.txt',
        'f4.txt',
        'f5.txt',
        'f6.txt',
        'link',
      ]);
      expect(entries[0]).toMatchObject({ type: 'directory' });
      expect(entries[3]).toMatchObject({ name: 'f2.txt', type: 'file', size: 2 });
      expect(entries[8]).toMatchObject({ name: 'link', type: 'symlink' });
      expect(new Date(entries[3].modifiedAt).toISOString()).toBe(entries[3].modifiedAt);
    });

    it('defaults to the first root and paginates with a cursor', async () => {
      const root = await request(service.app).get('/directory').expect(200);
      expect(root.body.result.path).toBe('.');
      expect(root.body.result.entries.map((e: { name: string }) => e.name)).toEqual(['dir']);
      const first = await request(service.app).get('/directory').query({ path: 'dir', limit: '4' }).expect(200);
      expect(first.body.result.entries).toHaveLength(4);
      const second = await request(service.app)
        .post('/tools/directory')
        .send({ path: 'dir', limit: 4, cursor: first.body.result.nextCursor })
        .expect(200);
      expect(second.body.result.entries[0].name).toBe('f3.txt');
      await request(service.app).get('/directory').query({ path: 'dir', cursor: 'garbage' }).expect(400);
      await request(service.app).get('/directory').query({ limit: '0' }).expect(400);
    });

    it('refuses paths outside the roots, files and missing directories', async () => {
      for (const p of ['..', '/etc', outside.dir, 'dir/../..']) {
        const res = await request(service.app).get('/directory').query({ path: p }).expect(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
      fs.symlinkSync(outside.dir, path.join(ws.dir, 'escape'));
      await request(service.app).get('/directory').query({ path: 'escape' }).expect(403);
      fs.rmSync(path.join(ws.dir, 'escape'));
      await request(service.app).get('/directory').query({ path: 'dir/f1.txt' }).expect(400);
      await request(service.app).get('/directory').query({ path: 'nope' }).expect(404);
      await request(service.app).get('/directory').query({ path: 'dir', extra: '1' }).expect(400);
    });
  });

  describe('processes', () => {
    it('lists processes including this one, filtered and paginated', async () => {
      const all = await request(service.app).get('/processes').query({ limit: '500' }).expect(200);
      expect(all.body.result.processes.some((p: { pid: number }) => p.pid === process.pid)).toBe(true);
      const filtered = await request(service.app).get('/processes').query({ filter: 'NODE', limit: '500' }).expect(200);
      expect(filtered.body.result.processes.length).toBeGreaterThan(0);
      expect(filtered.body.result.processes.every((p: { command: string }) => p.command.toLowerCase().includes('node'))).toBe(true);
      const one = await request(service.app).get('/processes').query({ limit: '1' }).expect(200);
      expect(one.body.result.processes).toHaveLength(1);
      const next = await request(service.app).get('/processes').query({ limit: '1', cursor: one.body.result.nextCursor }).expect(200);
      expect(next.body.result.processes[0].pid).toBeGreaterThan(one.body.result.processes[0].pid);
      await request(service.app).get('/processes').query({ limit: '501' }).expect(400);
    });
  });

  it('answers system_info through /tools/call', async () => {
    const res = await request(service.app).post('/tools/call').send({ name: 'system_info', arguments: {} }).expect(200);
    expect(res.body.result).toMatchObject({ node: process.version, cpus: { count: expect.any(Number) } });
    await request(service.app).post('/tools/system_info').send({ extra: 1 }).expect(400);
  });

  it('runs execute_command through /tools/call too, and rejects bodies that are not JSON objects', async () => {
    const res = await request(service.app)
      .post('/tools/call')
      .send({ name: 'execute_command', arguments: { command: 'echo via call' } })
      .expect(200);
    expect(res.body.result.stdout).toBe('via call\n');
    const bad = await request(service.app).post('/command').set('Content-Type', 'application/json').send('{"command":').expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    await request(service.app).post('/command').send(['echo']).expect(400);
  });
});
