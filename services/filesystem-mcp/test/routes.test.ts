import fs from 'node:fs';
import path from 'node:path';
import { toAppError } from '@mcp-fleet/kit';
import request from 'supertest';
import { readConfig } from '../src/config';
import { makeFixture, writeTree, type Fixture } from './helpers';

let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture({ BODY_LIMIT: '2kb' });
  writeTree(fx.rootA, { 'docs/readme.md': 'hello\n', 'a b/c d.txt': 'spaced\n' });
  fs.symlinkSync(fx.outside, path.join(fx.rootA, 'escape'));
});
afterAll(() => fx.cleanup());

describe('filesystem-mcp service surface', () => {
  it('lists its five tools with zod-generated schemas, annotations and stated caps', async () => {
    const res = await request(fx.service.app).get('/tools/list').expect(200);
    const tools = res.body.tools as {
      name: string;
      description: string;
      inputSchema: Record<string, unknown>;
      annotations: Record<string, boolean>;
    }[];
    expect(tools.map((t) => t.name).sort()).toEqual(['file_analyze', 'file_list', 'file_read', 'file_search', 'file_write']);
    const write = tools.find((t) => t.name === 'file_write')!;
    expect(write.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    // FILE_MAX_WRITE_BYTES (5 MiB) is lowered to this app's BODY_LIMIT of 2kb
    expect(write.description).toContain('2 KiB');
    expect(write.inputSchema).toMatchObject({
      properties: { mode: { enum: ['overwrite', 'create', 'append'] } },
      additionalProperties: false,
    });
    const read = tools.find((t) => t.name === 'file_read')!;
    expect(read.description).toContain('1 MiB');
    expect(read.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    for (const t of tools) expect((t.inputSchema.properties as Record<string, { description?: string }>).path.description).toBeTruthy();
  });

  it('answers /health with the workspace check and /metrics in Prometheus text', async () => {
    const health = await request(fx.service.app).get('/health').expect(200);
    expect(health.body).toMatchObject({ status: 'healthy', service: 'filesystem-mcp', tools: 5, checks: { workspace: { status: 'ok' } } });
    await request(fx.service.app).get('/file/docs/readme.md').expect(200);
    const metrics = await request(fx.service.app).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/mcp_fleet_tool_calls_total\{tool="file_read",outcome="ok",service="filesystem-mcp"\} 1/);
  });

  it('serves every documented route with the success envelope', async () => {
    const read = await request(fx.service.app).get('/file/docs/readme.md').expect(200);
    expect(read.body).toMatchObject({ success: true, service: 'filesystem-mcp', result: { content: 'hello\n' } });
    const spaced = await request(fx.service.app).get('/file/a%20b/c%20d.txt').expect(200);
    expect(spaced.body.result).toMatchObject({ path: 'a b/c d.txt', content: 'spaced\n' });
    await request(fx.service.app).get('/files/docs').expect(200);
    await request(fx.service.app).get('/files/').expect(200);
    await request(fx.service.app).get('/analyze/docs/readme.md').expect(200);
    await request(fx.service.app).get('/search/files?name=*.md').expect(200);
    const write = await request(fx.service.app).post('/file/write').send({ path: 'docs/new.md', content: 'x' }).expect(200);
    expect(write.body.result.created).toBe(true);
    const direct = await request(fx.service.app).post('/tools/file_read').send({ path: 'docs/new.md' }).expect(200);
    expect(direct.body.result.content).toBe('x');
  });

  it('refuses traversal, encoded traversal, encoded NUL and symlink escapes in route paths', async () => {
    const hostile = [
      '/file/../etc/passwd',
      '/file/%2e%2e/%2e%2e/etc/passwd',
      '/file/docs/%2E%2E/%2E%2E/etc/passwd',
      '/file/docs%2f..%2f..%2fetc%2fpasswd',
      '/file/escape/secret.txt',
      `/file/${fx.outside}/secret.txt`,
      '/files/..',
      '/files/%2e%2e',
      '/files/escape',
      '/analyze/%2e%2e/%2e%2e',
      '/analyze/escape/secret.txt',
    ];
    for (const url of hostile) {
      const res = await request(fx.service.app).get(url);
      expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 403, code: 'FORBIDDEN' });
      expect(JSON.stringify(res.body)).not.toContain('TOP SECRET');
    }
    for (const url of ['/file/docs/readme.md%00.png', '/files/docs%00', '/analyze/%00', '/file/%zz']) {
      const res = await request(fx.service.app).get(url);
      expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 400, code: 'VALIDATION_ERROR' });
    }
    const search = await request(fx.service.app).get('/search/files').query({ path: '../..', name: '*' }).expect(403);
    expect(search.body.code).toBe('FORBIDDEN');
    const write = await request(fx.service.app).post('/file/write').send({ path: '../escaped.txt', content: 'x' }).expect(403);
    expect(write.body.code).toBe('FORBIDDEN');
    expect(fs.existsSync(path.join(path.dirname(fx.rootA), 'escaped.txt'))).toBe(false);
  });

  it('maps bad bodies, big bodies, wrong types and unknown tools to documented codes', async () => {
    const malformed = await request(fx.service.app)
      .post('/file/write')
      .set('Content-Type', 'application/json')
      .send('{"path": ')
      .expect(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
    const big = await request(fx.service.app)
      .post('/file/write')
      .send({ path: 'big.txt', content: 'x'.repeat(4096) })
      .expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    const wrong = await request(fx.service.app).get('/file/docs/readme.md').query({ offset: 'start', encoding: 'hex' }).expect(400);
    expect(wrong.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['encoding', 'offset']);
    const unknownQuery = await request(fx.service.app).get('/files/docs').query({ sort: 'name' }).expect(400);
    expect(unknownQuery.body.code).toBe('VALIDATION_ERROR');
    const unknown = await request(fx.service.app).post('/tools/call').send({ name: 'file_delete', arguments: {} }).expect(404);
    expect(unknown.body.code).toBe('UNKNOWN_TOOL');
    await request(fx.service.app).post('/tools/file_delete').send({}).expect(404);
    const noRoute = await request(fx.service.app).get('/nowhere').expect(404);
    expect(noRoute.body.code).toBe('NOT_FOUND');
  });

  it('never answers 500, whatever the arguments', async () => {
    const paths: unknown[] = [
      '',
      ' ',
      '.',
      './',
      '//',
      '\\..\\..',
      '~',
      '~/x',
      'a'.repeat(5000),
      `${'d/'.repeat(300)}x`,
      'docs/readme.md/x',
      'escape/../x',
      'ü/ñ/😀',
      '\u0000',
      '%00',
      '%2e%2e',
      null,
      0,
      -1,
      true,
      {},
      [],
      ['docs'],
      { path: 'x' },
      1e308,
    ];
    const others: Record<string, unknown>[] = [
      {},
      { content: '' },
      { content: 'y'.repeat(3000) },
      { content: 'x', encoding: 'base64' },
      { name: '[' },
      { name: '**/**/**/*' },
      { offset: 1e20 },
      { limit: 1e9 },
      { cursor: 'x'.repeat(600) },
    ];
    for (const tool of ['file_read', 'file_write', 'file_list', 'file_search', 'file_analyze']) {
      for (const p of paths) {
        for (const extra of others) {
          // In-process, so arguments bigger than this app's 2kb body limit reach the tool too.
          const status = await fx.service.callTool(tool, { path: p, ...extra }).then(
            () => 200,
            (err: unknown) => toAppError(err).status,
          );
          if (status >= 500) throw new Error(`${tool} ${JSON.stringify({ path: p, ...extra }).slice(0, 200)} -> ${status}`);
        }
      }
    }
    expect(fs.readdirSync(fx.outside)).toEqual(['secret.txt']);
  });
});

describe('config', () => {
  it('defaults to the working directory and the documented caps', () => {
    const config = readConfig({});
    expect(config.WORKSPACE_ROOTS).toEqual([process.cwd()]);
    expect(config).toMatchObject({
      FILE_MAX_READ_BYTES: 1024 * 1024,
      FILE_MAX_WRITE_BYTES: 5 * 1024 * 1024,
      FILE_SEARCH_MAX_FILES: 20_000,
      BODY_LIMIT: '8mb',
    });
  });

  it('names every bad variable at boot', () => {
    expect(() => readConfig({ FILE_MAX_READ_BYTES: 'lots', FILE_SEARCH_MAX_FILES: '0' })).toThrow(
      /FILE_MAX_READ_BYTES[\s\S]*FILE_SEARCH_MAX_FILES/,
    );
  });
});
