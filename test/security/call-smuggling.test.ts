/**
 * Class: smuggling a call through the coordinator surface. The caller names the tool and its
 * arguments; it must not choose where the call goes (another service, another gateway route) nor pass
 * options the contract does not offer (a shell's args, a working directory, bound SQL parameters, a
 * write mode), nor pollute objects with `__proto__`. The service id comes from the tool's own
 * definition, tool names are looked up in a map, and each tool's schema is strict: a refused call is
 * the caller's 4xx and never reaches the gateway.
 */
import request from 'supertest';
import { coordinator, startFakeGateway, type FakeGateway } from '../../services/coordinator/test/fake-gateway';

let gateway: FakeGateway;
let app: ReturnType<typeof coordinator>;
beforeAll(async () => {
  gateway = await startFakeGateway();
  app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '0' });
});
afterAll(async () => {
  await app.close();
  await gateway.close();
});
beforeEach(() => (gateway.seen.length = 0));

const forwarded = () => gateway.seen.filter((s) => s.url.startsWith('/mcp'));
const call = (body: string | object) => request(app.app).post('/mcp').set('Content-Type', 'application/json').send(body);

describe('calls cannot be steered or widened through the coordinator', () => {
  it.each([
    'terminal-mcp__execute_command',
    'filesystem-mcp__file_read',
    '../terminal-mcp',
    'file_read/../../terminal-mcp',
    'file_read%2F..%2Fterminal-mcp',
    '__proto__',
    'constructor',
    'hasOwnProperty',
    'FILE_READ',
    ' file_read',
    'file_read\u0000',
    'git_commit',
  ])('refuses the tool name %j before asking the gateway', async (tool) => {
    const res = await call({ tool, arguments: { path: 'x' } });
    expect([404, 400]).toContain(res.status);
    expect(['UNKNOWN_TOOL', 'VALIDATION_ERROR']).toContain(res.body.code);
    expect(forwarded()).toEqual([]);
  });

  it.each([
    ['execute_command', { command: 'ls', args: ['-la', '/'] }, 'args'],
    ['execute_command', { command: 'ls', cwd: '/' }, 'cwd'],
    ['execute_command', { command: 'cat', stdin: 'x' }, 'stdin'],
    ['file_read', { path: 'a', encoding: 'base64' }, 'encoding'],
    ['file_write', { path: 'a', content: 'x', mode: 'append' }, 'mode'],
    ['file_write', { path: 'a', content: 'x', createDirs: true }, 'createDirs'],
    ['db_query', { query: 'SELECT $1', params: ['x'] }, 'params'],
    ['store_memory', { content: 'x', metadata: { a: 1 } }, 'metadata'],
    ['git_log', { repository: '.', path: '/etc' }, 'path'],
    ['system_info', { verbose: true }, 'verbose'],
  ])('refuses %s with an option the contract does not name (%j)', async (tool, args, field) => {
    const res = await call({ tool, arguments: args });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body)).toContain(field);
    expect(forwarded()).toEqual([]);
  });

  it('refuses __proto__ and constructor keys in the body and the arguments, and pollutes nothing', async () => {
    for (const body of [
      '{"tool": "system_info", "arguments": {"__proto__": {"polluted": true}}}',
      '{"tool": "file_read", "arguments": {"path": "a", "__proto__": {"polluted": true}}}',
      '{"tool": "system_info", "__proto__": {"polluted": true}}',
      '{"tool": "system_info", "arguments": {"constructor": {"prototype": {"polluted": true}}}}',
    ]) {
      const res = await call(body);
      expect([body, res.status]).toEqual([body, 400]);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(forwarded()).toEqual([]);
  });

  it('sends a legitimate call to the service of its definition only, with exactly the contract arguments', async () => {
    const res = await call({ tool: 'execute_command', arguments: { command: 'ls -la' } });
    expect(res.status).toBe(200);
    expect(forwarded()).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/mcp/terminal-mcp',
        body: { tool: 'execute_command', arguments: { command: 'ls -la' } },
      }),
    ]);
  });
});
