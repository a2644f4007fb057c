/**
 * Compose gives each service its own log volume at /logs/<id> (docs/deployment.md, "Compose"), mounted
 * read-only into the two readers of the fleet's logs: log-mcp (LOG_ROOTS=/logs) and the gateway's console
 * log tail (its own LOG_FILE at /logs/mega-orchestrator/mega-orchestrator.log). Both are run here on that
 * layout, on a temp directory standing for /logs, with the environment compose.yaml gives them.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import YAML from 'yaml';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp as createLogApp } from '../../services/log-mcp/src/app';
import { configSchema as logConfigSchema } from '../../services/log-mcp/src/config';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

// compose.yaml as committed (test/static/inventory-agreement.test.ts keeps it equal to the generator's output)
const compose = YAML.parse(fs.readFileSync(path.join(__dirname, '../../compose.yaml'), 'utf8'));
const LOG_ROOT = '/logs';
const tmp = tempDir('mcp-fleet-compose-logs-');
const logs = path.join(tmp.dir, 'logs');
/** A path compose names under /logs, here under the temp directory. */
const here = (p: string) => path.join(logs, path.relative(LOG_ROOT, p));
const line = (service: string, message: string) => `${JSON.stringify({ level: 'info', service, message })}\n`;

for (const id of ['notes-mcp', 'log-mcp', 'mega-orchestrator']) fs.mkdirSync(path.join(logs, id), { recursive: true });
fs.writeFileSync(path.join(logs, 'notes-mcp', 'notes-mcp.log'), line('notes-mcp', 'notes-mcp listening'));
afterAll(() => tmp.cleanup());

/** The answer's status and, for an SSE stream (it stays open), its first event; then it hangs up. */
async function firstEvent(base: string, target: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const hangUp = new AbortController();
  const res = await fetch(new URL(target, base), { headers, signal: hangUp.signal });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: res.status, text: await res.text() };
  const reader = res.body!.getReader();
  let text = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    text += Buffer.from(chunk.value).toString('utf8');
    if (text.includes('\n\n')) break;
  }
  hangUp.abort();
  return { status: res.status, text };
}

describe('the fleet log readers on the compose layout (a folder per service)', () => {
  it('log-mcp with compose’s LOG_ROOTS finds every service’s lines, by service', async () => {
    const env = compose.services['log-mcp'].environment;
    expect(env.LOG_ROOTS).toBe(LOG_ROOT);
    fs.writeFileSync(here(env.LOG_FILE), line('log-mcp', 'log-mcp listening'));
    const config = logConfigSchema.parse({ ...testConfig, DATA_DIR: path.join(tmp.dir, 'log-data'), LOG_ROOTS: here(env.LOG_ROOTS) });
    const service = createLogApp({ config, logger: testLogger() });
    try {
      const all = await request(service.app).post('/tools/log_search').send({ query: 'listening' });
      expect(all.status).toBe(200);
      expect(all.body.result.matches.map((m: { message: string }) => m.message).sort()).toEqual([
        'log-mcp listening',
        'notes-mcp listening',
      ]);
      const one = await request(service.app).post('/tools/log_search').send({ query: 'listening', service: 'notes-mcp' });
      expect(one.body.result.matches.map((m: { file: string }) => path.relative(logs, m.file))).toEqual([
        path.join('notes-mcp', 'notes-mcp.log'),
      ]);
    } finally {
      await service.close();
    }
  });

  describe('the console tails a service’s log beside the gateway’s own folder', () => {
    const ops = newApiKey('ops', ['admin', 'tools:all']);
    const keysFile = path.join(tmp.dir, 'keys.json');
    let gateway: RunningGateway;
    beforeAll(async () => {
      fs.writeFileSync(keysFile, JSON.stringify([ops.entry]), { mode: 0o600 });
      const logFile = here(compose.services['mega-orchestrator'].environment.LOG_FILE);
      expect(logFile).toBe(path.join(logs, 'mega-orchestrator', 'mega-orchestrator.log'));
      fs.writeFileSync(logFile, line('mega-orchestrator', 'gateway listening'));
      gateway = await startGateway(
        [
          { id: 'notes-mcp', url: 'http://127.0.0.1:9', tools: ['note'] },
          { id: 'other-mcp', url: 'http://127.0.0.1:9', tools: ['other'] },
        ],
        path.join(tmp.dir, 'gw-data'),
        {
          API_KEYS_FILE: keysFile,
          LOG_FILE: logFile,
          HEALTH_POLL_MS: '600000',
        },
      );
    });
    afterAll(() => gateway?.stop());

    it('reads /logs/<id>/<id>.log for another service and its own LOG_FILE for itself', async () => {
      const auth = { authorization: `Bearer ${ops.key}` };
      const notes = await firstEvent(gateway.url, '/console/api/logs/notes-mcp', auth);
      expect(notes.status).toBe(200);
      expect(notes.text).toContain('notes-mcp listening');
      const own = await firstEvent(gateway.url, '/console/api/logs/mega-orchestrator', auth);
      expect(own.status).toBe(200);
      expect(own.text).toContain('gateway listening');
      // a service with no folder there: not found, naming no other place
      const missing = await firstEvent(gateway.url, '/console/api/logs/other-mcp', auth);
      expect(missing.status).toBe(404);
      expect(missing.text).toContain(path.join(logs, 'other-mcp', 'other-mcp.log'));
    });
  });
});
