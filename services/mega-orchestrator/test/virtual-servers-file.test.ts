/**
 * VIRTUAL_SERVERS_FILE followed on disk (core/virtual-servers/file.ts): the file itself is watched,
 * not its directory, where the gateway's SQLite history is written many times a second under load
 * (each write woke the event loop while the directory was watched); a file renamed over it, removed
 * and written again, or replaced by the admin API is still followed by change events. The stat poll
 * is set to a minute here so that only the change events can make these pass, except where a file
 * appears (there the poll is what sees it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { DefinitionFile } from '../src/core/virtual-servers/file';
import type { VirtualServerDef } from '../src/core/virtual-servers/definition';
import { until } from './helpers';

const defs = (...names: string[]) => `servers:\n${names.map((n) => `  ${n}:\n    tools:\n      - memory_stats\n`).join('')}`;

let tmp: ReturnType<typeof tempDir>;
let file: string;
let applied: string[][];
let def: DefinitionFile | undefined;
/** Change events delivered to the watchers the definition file made, by the name they carried. */
let events: string[];

const last = () => applied.at(-1)?.join(',');

function start(text: string, pollMs = 60_000): DefinitionFile {
  fs.writeFileSync(file, text);
  def = new DefinitionFile(file, text, (servers: Map<string, VirtualServerDef>) => applied.push([...servers.keys()]), testLogger(), pollMs);
  def.watch();
  return def;
}

beforeEach(() => {
  tmp = tempDir();
  file = path.join(tmp.dir, 'virtual-servers.yaml');
  applied = [];
  events = [];
  const watch = fs.watch.bind(fs) as (...args: unknown[]) => fs.FSWatcher;
  jest.spyOn(fs, 'watch').mockImplementation(((target: fs.PathLike, options: fs.WatchOptions, listener: fs.WatchListener<string>) =>
    watch(target, options, (event: fs.WatchEventType, name: string | null) => {
      events.push(String(name));
      listener(event, name);
    })) as unknown as typeof fs.watch);
});

afterEach(() => {
  def?.close();
  def = undefined;
  jest.restoreAllMocks();
  tmp.cleanup();
});

it('a SQLite database written in the same directory wakes no watcher of it, and an edit of the file is still read', async () => {
  start(defs('a'));
  const db = await SqliteDb.open(path.join(tmp.dir, 'contexts.sqlite')); // in WAL mode, as the history's
  await db.exec('CREATE TABLE calls (id INTEGER PRIMARY KEY, text TEXT)');
  for (let i = 0; i < 30; i++) await db.run('INSERT INTO calls (text) VALUES (?)', ['x'.repeat(i * 100)]);
  fs.writeFileSync(path.join(tmp.dir, 'other.txt'), 'x');
  await db.close();
  await new Promise((r) => setTimeout(r, 200));
  expect(events).toEqual([]);
  expect(applied).toEqual([]);

  fs.appendFileSync(file, defs('b').slice('servers:\n'.length));
  await until(() => last() === 'a,b');
});

it('a file renamed over it (an editor saving, atomicWrite) is followed: a later edit of the new file is read too', async () => {
  start(defs('a'));
  fs.writeFileSync(`${file}.tmp`, defs('a', 'b'));
  fs.renameSync(`${file}.tmp`, file);
  await until(() => last() === 'a,b');
  fs.writeFileSync(file, defs('c'));
  await until(() => last() === 'c');
  expect(events.length).toBeGreaterThan(0);
});

it("the admin API's write (a new file renamed over it) is followed", async () => {
  const d = start(defs('a'));
  await d.change('b', { tools: [{ tool: 'memory_stats' }] } as VirtualServerDef);
  expect(last()).toBe('a,b');
  fs.writeFileSync(file, defs('c'));
  await until(() => last() === 'c');
});

it('a file removed keeps the servers; written again it is read (the poll sees it appear) and then followed by change events', async () => {
  const d = start(defs('a'), 150);
  fs.rmSync(file);
  await until(() => /is gone/.test(d.status().error?.message ?? ''));
  expect(applied).toEqual([]);
  fs.writeFileSync(file, defs('b'));
  await until(() => last() === 'b');
  events = [];
  fs.writeFileSync(file, defs('c'));
  await until(() => last() === 'c');
  expect(events.length).toBeGreaterThan(0); // a watcher of the new file saw the edit, not only the poll
  expect(d.status().error).toBeUndefined();
});
