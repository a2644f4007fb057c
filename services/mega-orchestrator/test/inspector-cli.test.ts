/**
 * MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, pinned in the catalog) against the
 * gateway's `/mcp` over Streamable HTTP: what many people poke an MCP server with. The gateway stands
 * in front of the fixture MCP server (stdio); Inspector lists and calls its tools (a success with
 * arguments and a tool error), lists and gets its prompt, in both protocol eras (`--protocol-era
 * legacy`: 2025-11-25 with initialize; `modern`: 2026-07-28, stateless), and its printed JSON is checked.
 *
 * Inspector 2.x needs Node 22.19+ (its engines field): run by this Node when it is one, else by
 * INSPECTOR_NODE, else by `npx -y node@22` (from the npm registry, cached by npx). No Node 22 to be
 * had: skipped locally, a failing test under REQUIRE_BACKENDS=1 (CI), never a silent pass.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBackends, tempDir } from '@mcp-fleet/testing';
import { startGatewayWithStdioServer, type RunningGateway } from './helpers';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const PKG = require.resolve('@modelcontextprotocol/inspector/package.json', { paths: [REPO_ROOT] });
const INSPECTOR = path.join(path.dirname(PKG), 'clients/launcher/build/index.js');
const FIXTURE = path.join(__dirname, 'fixtures', 'mcp-fixture-server.ts');

/** The Node major.minor Inspector asks for (its engines field, ">=22.19.0"). */
const WANTED = (JSON.parse(fs.readFileSync(PKG, 'utf8')) as { engines: { node: string } }).engines.node
  .match(/(\d+)\.(\d+)/)!
  .slice(1)
  .map(Number);
const recent = (version: string) => {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > WANTED[0] || (major === WANTED[0] && minor >= WANTED[1]);
};

/** A Node binary Inspector runs on, and how it was found; or why there is none. */
function findNode(): { node?: string; how: string } {
  if (recent(process.version)) return { node: process.execPath, how: `this Node (${process.version})` };
  const tried: string[] = [];
  const candidates: [string, string[], string][] = [];
  if (process.env.INSPECTOR_NODE) candidates.push([process.env.INSPECTOR_NODE, [], 'INSPECTOR_NODE']);
  candidates.push(['npx', ['-y', 'node@22'], 'npx -y node@22']);
  for (const [command, prefix, how] of candidates) {
    const run = spawnSync(command, [...prefix, '-p', 'process.version + " " + process.execPath'], { encoding: 'utf8', timeout: 180_000 });
    const [version, binary] = (run.stdout ?? '').trim().split(' ');
    if (run.status === 0 && version && recent(version)) return { node: binary, how: `${how} (${version})` };
    tried.push(`${how}: ${run.error?.message ?? (version || run.stderr?.trim().slice(-300) || `exit ${run.status}`)}`);
  }
  return { how: `no Node ${WANTED.join('.')}+ for Inspector (this one is ${process.version}); tried ${tried.join('; ')}` };
}

const found = findNode();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs Inspector's CLI with these arguments (after the gateway's URL); asynchronous: the gateway answers from this process. */
function inspector(url: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(found.node!, [INSPECTOR, '--cli', url, '--format', 'json', '-q', ...args], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', MCP_CATALOG_PATH: path.join(tmp.dir, 'catalog.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON Inspector printed, or a failure that shows the whole run. */
async function json(url: string, args: string[]): Promise<any> {
  const run = await inspector(url, args);
  try {
    if (run.code !== 0) throw new Error(`exit ${run.code}`);
    return JSON.parse(run.stdout);
  } catch (err) {
    throw new Error(`inspector ${args.join(' ')}: ${(err as Error).message}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

const tmp = tempDir('mcp-fleet-inspector-');
afterAll(() => tmp.cleanup());

/** The suite where a Node 22 was found; else, under REQUIRE_BACKENDS=1, one failing test saying why; else skipped. */
function describeInspector(title: string, fn: () => void): void {
  if (found.node) describe(`${title} [${found.how}]`, fn);
  else if (requireBackends())
    describe(title, () => {
      it(`needs Node ${WANTED.join('.')}+ for Inspector (REQUIRE_BACKENDS=1)`, () => {
        throw new Error(`${found.how}; set INSPECTOR_NODE to a Node ${WANTED.join('.')}+ binary or unset REQUIRE_BACKENDS.`);
      });
    });
  else describe.skip(`${title} [${found.how}]`, fn);
}

describeInspector("MCP Inspector's CLI against the gateway's /mcp", () => {
  let gateway: RunningGateway;
  let url: string;
  beforeAll(async () => {
    gateway = await startGatewayWithStdioServer('fixture', FIXTURE, path.join(tmp.dir, 'data'), 'fx_echo');
    url = `${gateway.url}/mcp`;
  }, 30_000);
  afterAll(() => gateway?.stop());

  // legacy: 2025-11-25, initialize and a session; modern: 2026-07-28, stateless
  describe.each(['legacy', 'modern'])('--protocol-era %s', (era) => {
    const run = (args: string[]) => inspector(url, ['--protocol-era', era, ...args]);
    const ok = (args: string[]) => json(url, ['--protocol-era', era, ...args]);

    it('tools/list: the fixture’s tools with their schemas, and no portability error (--strict)', async () => {
      const { result } = await ok(['--method', 'tools/list', '--strict']);
      const names = result.tools.map((t: { name: string }) => t.name);
      expect(names).toEqual(expect.arrayContaining(['fx_echo', 'fx_fail', 'fx_slow', 'fx_image']));
      const echo = result.tools.find((t: { name: string }) => t.name === 'fx_echo');
      expect(echo).toMatchObject({
        description: 'Echoes text back.',
        inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'] },
        annotations: { readOnlyHint: true, idempotentHint: true },
      });
    });

    it('tools/call with arguments: the text, the structured result, typed arguments', async () => {
      const { result } = await ok(['--method', 'tools/call', '--tool-name', 'fx_echo', '--tool-arg', 'text=hello there']);
      expect(result).toMatchObject({
        content: [{ type: 'text', text: 'hello there' }],
        structuredContent: { text: 'hello there' },
      });
      // a success as the fixture said it: without isError (the protocol's default)
      expect(result).not.toHaveProperty('isError');
      if (era === 'modern') expect(result.resultType).toBe('complete');
      // a number: Inspector converts `ms=5` by the schema the gateway listed (the fixture refuses a string)
      const slow = await ok(['--method', 'tools/call', '--tool-name', 'fx_slow', '--tool-arg', 'ms=5']);
      expect(slow.result.content).toEqual([{ type: 'text', text: 'waited 5' }]);
    });

    it('tools/call of a failing tool: a tool error (isError), exit 5', async () => {
      const failed = await run(['--method', 'tools/call', '--tool-name', 'fx_fail']);
      expect({ code: failed.code, error: JSON.parse(failed.stderr).error.code }).toEqual({ code: 5, error: 'tool_is_error' });
      expect(JSON.parse(failed.stdout).result).toMatchObject({ content: [{ type: 'text', text: 'it failed on purpose' }], isError: true });
    });

    it('prompts/list and prompts/get; resources/list', async () => {
      const prompts = await ok(['--method', 'prompts/list']);
      expect(prompts.result.prompts).toEqual([
        expect.objectContaining({ name: 'fx_review', arguments: [expect.objectContaining({ name: 'file', required: true })] }),
      ]);
      const prompt = await ok(['--method', 'prompts/get', '--prompt-name', 'fx_review', '--prompt-args', 'file=app.ts']);
      expect(prompt.result.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Please review app.ts carefully.' } }]);
      const resources = await ok(['--method', 'resources/list']);
      expect(resources.result.resources.map((r: { uri: string }) => r.uri)).toEqual(
        expect.arrayContaining(['mega://health', 'mega://services', 'mega://schema']),
      );
    });
  });
});
