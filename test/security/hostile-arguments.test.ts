/**
 * Class: hostile tool arguments, every tool of the whole fleet, through the gateway. The real fleet
 * (the launcher, embedded defaults, every service its own process) is asked every tool of its
 * catalog with arguments built from the tool's own schema and then spoiled one property at a time:
 * wrong types, traversal and injection spellings, control characters, lone surrogates, huge and
 * empty values, prototype keys. Whatever a tool makes of them, the answer is a clear error of the
 * caller's (4xx with a code and a message) or of a missing backend (501-504), never a fault of the
 * service (500, INTERNAL), never a dropped connection; no answer carries /etc/passwd or a private
 * key; and at the end every service is healthy with its circuit breaker never opened (a caller's
 * bad arguments must not take a service away from everyone: the sweep that found `precommit`
 * failing INTERNAL for a file also found that five such calls opened the toolkit's breaker for all
 * ten of its tools).
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
};

/** Strings that have broken tools elsewhere: traversal, injection, encodings, names with meaning. */
const HOSTILE_STRINGS = [
  '',
  '../../../../etc/passwd',
  '/etc/passwd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..\\..\\..\\windows\\win.ini',
  'a\u0000b',
  '\uD800',
  '$(id)',
  '`id`',
  ';id',
  '--help',
  '-rf',
  "' OR 1=1 --",
  'file:///etc/passwd',
  'http://169.254.169.254/latest/meta-data',
  'gopher://127.0.0.1:6379/_INFO',
  '\r\n\t',
  '.env',
  '.git/config',
  '**/*',
  '[',
  '😀'.repeat(40),
  'x'.repeat(100_000),
];
const WRONG_TYPES: unknown[] = [null, true, -1, 1.5, 1e308, 2 ** 53 + 1, [], [null, {}], {}, 'str'];

/** The smallest arguments the schema accepts: its required properties, each the simplest value of its type. */
function minimal(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 4) return 'x';
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'string') return 'test';
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [minimal(schema.items, depth + 1)];
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema.properties ?? {})) if ((schema.required ?? []).includes(k)) out[k] = minimal(v, depth + 1);
    return out;
  }
  return 'x';
}

/** The spoiled arguments for one tool: none, a prototype key, then each property with every wrong type and (strings) every hostile spelling. */
function* spoiled(schema: Schema | undefined): Generator<unknown> {
  const base = (minimal(schema) ?? {}) as Record<string, unknown>;
  yield {};
  yield JSON.parse(`{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}`);
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    for (const wrong of WRONG_TYPES) yield { ...base, [key]: wrong };
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    if (type === 'string' || type === undefined) for (const s of HOSTILE_STRINGS) yield { ...base, [key]: s };
    if (type === 'array') yield { ...base, [key]: HOSTILE_STRINGS };
  }
}

const LEAK = /root:[x*]?:0:0:|-----BEGIN [A-Z ]*PRIVATE KEY-----/;

let fleet: FleetHandle;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('hostile-args-');
  const workspace = path.join(tmp.dir, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'test'), 'a file named like the default string argument\n');
  fleet = await startFleet({ dataDir: path.join(tmp.dir, 'data'), workspace, timeoutMs: 120_000 });
  await waitFor(
    'every service in the catalog',
    async () => {
      const { body } = await getJson(`${fleet.gateway}/services`);
      // the downstreams (those with a breaker): not the gateway itself, the excluded scaffold or the coordinator beside it
      const downstreams = (body.services as { status: string; breaker?: object }[]).filter((s) => s.breaker);
      return downstreams.length > 20 && downstreams.every((s) => s.status === 'healthy');
    },
    60_000,
  );
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  tmp?.cleanup();
});

it('answers every tool of the fleet, with arguments spoiled every way, as the caller’s error or a missing backend’s, never a fault; the breakers stay closed', async () => {
  const { body } = await getJson(`${fleet.gateway}/tools/list`);
  const tools = body.tools as { name: string; inputSchema?: Schema }[];
  expect(tools.length).toBeGreaterThan(90);
  const faults: string[] = [];
  const unclear: string[] = [];
  const leaks: string[] = [];
  const statuses = new Map<number, number>();
  let calls = 0;
  // four tools at a time (each tool's calls one after another): most of the time is waiting (DNS that
  // finds no network, a log scan), not CPU
  const queue = [...tools];
  const worker = async () => {
    for (let tool = queue.shift(); tool; tool = queue.shift()) {
      for (const args of spoiled(tool.inputSchema)) {
        const res = await postJson(`${fleet.gateway}/mcp`, { tool: tool.name, arguments: args });
        calls++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const shown = `${tool.name} ${JSON.stringify(args).slice(0, 120)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        if (res.status === 500 || res.status < 200 || res.body?.code === 'INTERNAL') faults.push(shown);
        else if (res.status >= 400 && (typeof res.body?.code !== 'string' || typeof res.body?.error !== 'string')) unclear.push(shown);
        if (LEAK.test(JSON.stringify(res.body))) leaks.push(shown);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  expect(calls).toBeGreaterThan(2000);
  expect(faults).toEqual([]);
  expect(unclear).toEqual([]);
  expect(leaks).toEqual([]);
  // most of it is refused as the caller's (400) and some of it is served: the sweep reached the tools
  expect(statuses.get(400) ?? 0).toBeGreaterThan(calls / 4);
  expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
  const { body: after } = await getJson(`${fleet.gateway}/services`);
  const hurt = (after.services as { id: string; status: string; breaker?: { timesOpened: number } }[])
    .filter((s) => s.breaker && (s.status !== 'healthy' || s.breaker.timesOpened > 0))
    .map((s) => `${s.id}: ${s.status}, breaker opened ${s.breaker?.timesOpened} times`);
  expect(hurt).toEqual([]);
}, 600_000);
