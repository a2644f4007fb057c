import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '@mcp-fleet/testing';
import { startToolkit } from './helpers';

const ws = tempDir('toolkit-ws-');
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws.dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws.dir, rel), text);
};
write('proj/pkg/__init__.py', '');
write(
  'proj/pkg/a.py',
  'from .b import helper\n\nclass A:\n    def run(self):\n        return self.step()\n\n    def step(self):\n        return helper(1)\n',
);
write('proj/pkg/b.py', 'import os\n\ndef helper(x):\n    return os.getcwd()\n');
write('notes.txt', 'one\ntwo\nthree\nfour\n');

// A local server speaking the chat-completions wire format; it echoes what it received.
const seen: { auth?: string; body: { model: string; messages: { role: string; content: string }[] } }[] = [];
const llm = http.createServer((req, res) => {
  let data = '';
  req.on('data', (c) => (data += c));
  req.on('end', () => {
    const body = JSON.parse(data);
    seen.push({ auth: req.headers.authorization, body });
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        model: body.model,
        choices: [
          { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `reviewed ${body.messages[1].content.length} chars` } },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
      }),
    );
  });
});

const connect = (env: Record<string, string>): Promise<Client> => startToolkit(ws.dir, env);

const result = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

let withModel: Client;
let offline: Client;

beforeAll(async () => {
  await new Promise<void>((r) => llm.listen(0, '127.0.0.1', r));
  const port = (llm.address() as { port: number }).port;
  [withModel, offline] = await Promise.all([
    connect({ LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, LLM_API_KEY: 'test-key', LLM_MODEL: 'local-model' }),
    connect({}),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([withModel?.close(), offline?.close()]);
  await new Promise((r) => llm.close(r));
  ws.cleanup();
});

describe('toolkit-mcp-server over stdio (official SDK client)', () => {
  it('lists the ten tools with JSON Schemas', async () => {
    const { tools } = await offline.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'thinkdeep',
      'codereview',
      'debug',
      'analyze',
      'chat',
      'precommit',
      'testgen',
      'refactor',
      'tracer',
      'fileretrieve',
    ]);
    expect(tools.find((t) => t.name === 'fileretrieve')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { paths: { type: 'array' } },
    });
  });

  it('fileretrieve returns files and line ranges inside the workspace only', async () => {
    const r = result(await offline.callTool({ name: 'fileretrieve', arguments: { paths: ['notes.txt'], startLine: 2, endLine: 3 } }));
    expect(r.files).toEqual([{ path: 'notes.txt', totalLines: 4, startLine: 2, endLine: 3, content: 'two\nthree' }]);
    const bad = await offline.callTool({ name: 'fileretrieve', arguments: { paths: ['/etc/passwd'] } });
    expect(bad.isError).toBe(true);
    expect(result(bad).code).toBe('FORBIDDEN');
    const invalid = await offline.callTool({ name: 'fileretrieve', arguments: { paths: [] } });
    expect(result(invalid).code).toBe('VALIDATION_ERROR');
  });

  it('analyze and tracer read the Python structure offline', async () => {
    const file = result(await offline.callTool({ name: 'analyze', arguments: { path: 'proj/pkg/a.py' } }));
    expect(file.definitions.map((d: { qualname: string }) => d.qualname)).toEqual(['A', 'A.run', 'A.step']);
    const dir = result(await offline.callTool({ name: 'analyze', arguments: { path: 'proj' } }));
    expect(dir).toMatchObject({ files: 3, modules: 3, classes: 1, methods: 2, functions: 1 });
    const t = result(await offline.callTool({ name: 'tracer', arguments: { path: 'proj', symbol: 'pkg.a.A.run', depth: 3 } }));
    expect(t.steps.map((s: { depth: number; to: string }) => `${s.depth}:${s.to}`)).toEqual([
      '1:pkg.a.A.step',
      '2:pkg.b.helper',
      '3:os.getcwd',
    ]);
    const callers = result(
      await offline.callTool({ name: 'tracer', arguments: { path: 'proj', symbol: 'pkg.b.helper', direction: 'callers' } }),
    );
    expect(callers.steps[0]).toMatchObject({ from: 'pkg.a.A.step', file: 'pkg/a.py', line: 8 });
  });

  it('precommit reports staged conflict markers, secrets and large files', async () => {
    const repo = path.join(ws.dir, 'repo');
    fs.mkdirSync(repo);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'clean.txt'), 'hello\n');
    git('add', 'clean.txt');
    const ok = result(await offline.callTool({ name: 'precommit', arguments: { path: 'repo' } }));
    expect(ok).toMatchObject({ ok: true, staged: ['clean.txt'], findings: [] });
    // a file inside the repository stands for its directory (it was an INTERNAL error: simple-git takes only directories)
    const byFile = result(await offline.callTool({ name: 'precommit', arguments: { path: 'repo/clean.txt' } }));
    expect(byFile).toMatchObject({ ok: true, repository: fs.realpathSync(repo), staged: ['clean.txt'] });
    const outside = await offline.callTool({ name: 'precommit', arguments: { path: 'notes.txt' } });
    expect(outside.isError).toBe(true);
    expect(result(outside).code).toBe('VALIDATION_ERROR');
    fs.writeFileSync(path.join(repo, 'bad.py'), 'x = 1\n<<<<<<< HEAD\npassword = "hunter2hunter2"\n>>>>>>> other\n');
    fs.writeFileSync(path.join(repo, 'big.bin'), Buffer.alloc(2048, 1));
    git('add', 'bad.py', 'big.bin');
    const r = result(await offline.callTool({ name: 'precommit', arguments: { path: 'repo', largeFileBytes: 1024 } }));
    expect(r.ok).toBe(false);
    expect(r.findings).toEqual(
      expect.arrayContaining([
        { kind: 'conflict-marker', file: 'bad.py', line: 2, detail: '<<<<<<<' },
        expect.objectContaining({ kind: 'secret', file: 'bad.py', line: 3 }),
        { kind: 'large-file', file: 'big.bin', detail: '2048 bytes' },
      ]),
    );
    expect(JSON.stringify(r.findings)).not.toContain('hunter2hunter2');
  });

  it('answers bad params to tools/call with -32602 naming the field', async () => {
    const bad = offline.request({ method: 'tools/call', params: { name: 42 } } as never, CallToolResultSchema);
    await expect(bad).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Invalid params for tools\/call: params\.name: /),
    });
    // the server is still there
    expect(result(await offline.callTool({ name: 'fileretrieve', arguments: { paths: ['notes.txt'] } })).files).toHaveLength(1);
  });

  it('model-backed tools name the variables when no model is configured', async () => {
    const r = await offline.callTool({ name: 'codereview', arguments: { prompt: 'review', files: ['proj/pkg/a.py'] } });
    expect(r.isError).toBe(true);
    expect(result(r)).toMatchObject({ code: 'NOT_CONFIGURED' });
    expect(result(r).error).toMatch(/LLM_BASE_URL.*LLM_MODEL.*LLM_API_KEY/);
  });

  it('model-backed tools send the prompt and file context to the chat-completions endpoint', async () => {
    const r = result(await withModel.callTool({ name: 'codereview', arguments: { prompt: 'Review this.', files: ['proj/pkg/b.py'] } }));
    expect(r).toMatchObject({
      tool: 'codereview',
      model: 'local-model',
      finishReason: 'stop',
      contextFiles: ['proj/pkg/b.py'],
      usage: { total_tokens: 13 },
    });
    const last = seen[seen.length - 1];
    expect(last.auth).toBe('Bearer test-key');
    expect(last.body.model).toBe('local-model');
    expect(last.body.messages[0].role).toBe('system');
    expect(last.body.messages[1].content).toContain('Review this.');
    expect(last.body.messages[1].content).toContain('def helper(x):');
    expect(r.answer).toBe(`reviewed ${last.body.messages[1].content.length} chars`);
    const u = await withModel.callTool({ name: 'nope', arguments: {} });
    expect(result(u).code).toBe('UNKNOWN_TOOL');
  });
});
