/**
 * The gateway's folders say which way each file faces (issue 29, docs/gateway.md "Layers"), and
 * imports run one way: clients → protocol → core → downstreams.
 *
 *   http/        faces clients over HTTP (the app, its routes, the console, the status page)
 *   mcp/         the protocol, both revisions (mcp/rev-2025-11-25/, mcp/rev-2026-07-28/)
 *   auth/        who the caller is and what it owns (used by every layer above downstream/)
 *   core/        the catalog, routing, dispatch, tasks, the guards on what servers offer
 *   history/     the call history's store
 *   downstream/  what faces the servers behind the gateway (kit services, MCP servers)
 *
 * A file may import its own folder and the folders below it, never one above. The two files at
 * the root (server.ts, the process; index.ts, the package's exports) may import anything.
 * KNOWN lists the edges that break the rule today, each to be removed as it is fixed: the test
 * fails on a new one, and on an entry of KNOWN that no longer exists (so the list only shrinks).
 */
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(__dirname, '../../services/mega-orchestrator/src');

/** Each folder and the folders it may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  http: ['mcp', 'auth', 'core', 'history', 'downstream'],
  mcp: ['auth', 'core', 'history', 'downstream'],
  auth: [],
  core: ['auth', 'history', 'downstream'],
  history: ['auth'],
  downstream: [],
};

/**
 * Exceptions, `from -> to` (paths under src/ without .ts): none since the downstream and protocol
 * sides were reworked (24 at the move into folders). Keep it empty; an entry must name an edge that exists.
 */
const KNOWN = new Set<string>([]);

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** Relative specifiers of every import, export-from, import() and require() in a file. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[2]);
  return out;
}

function resolve(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')])
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  return undefined;
}

const name = (file: string) => path.relative(SRC, file).replace(/\.ts$/, '');
const folder = (file: string) => {
  const rel = path.relative(SRC, file);
  return rel.includes(path.sep) ? rel.split(path.sep)[0] : '';
};

/** Every import edge between two folders of src/ (root files excluded). */
function crossEdges(): { edge: string; allowed: boolean }[] {
  const edges: { edge: string; allowed: boolean }[] = [];
  for (const file of files(SRC)) {
    const from = folder(file);
    if (from === '') continue;
    for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
      const target = resolve(file, spec);
      if (!target || !target.startsWith(SRC)) continue;
      const to = folder(target);
      if (to === from) continue;
      edges.push({ edge: `${name(file)} -> ${name(target)}`, allowed: to !== '' && (MAY_IMPORT[from]?.includes(to) ?? false) });
    }
  }
  return edges;
}

describe("the gateway's layers", () => {
  const edges = crossEdges();

  it('every file of src/ sits in a known folder or is one of the two root files', () => {
    const stray = files(SRC)
      .map(name)
      .filter((n) => (!n.includes('/') ? !['server', 'index'].includes(n) : !(n.split('/')[0] in MAY_IMPORT)));
    expect(stray).toEqual([]);
  });

  it('finds the imports it checks (the scan itself works)', () => {
    expect(edges.some((e) => e.edge === 'http/app -> core/config' || e.edge.startsWith('http/'))).toBe(true);
    expect(edges.filter((e) => e.allowed).length).toBeGreaterThan(50);
  });

  it('imports run one way: http → mcp → core → history → downstream (no new edge upward)', () => {
    const bad = [...new Set(edges.filter((e) => !e.allowed && !KNOWN.has(e.edge)).map((e) => e.edge))];
    expect(bad).toEqual([]);
  });

  it('KNOWN lists only edges that still exist (fixing one means deleting its entry)', () => {
    const present = new Set(edges.map((e) => e.edge));
    expect([...KNOWN].filter((e) => !present.has(e))).toEqual([]);
  });
});

describe("docs/gateway.md's file table", () => {
  const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/gateway.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `(src\/[^`]+)`/gm)].map((m) => m[1]);

  it('names only files and folders that exist', () => {
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.filter((r) => !fs.existsSync(path.join(SRC, '..', r)))).toEqual([]);
  });

  it('names every file of src/, itself or by its folder', () => {
    const unlisted = files(SRC)
      .concat(fs.readdirSync(path.join(SRC, 'http', 'ui')).map((f) => path.join(SRC, 'http', 'ui', f)))
      .map((f) => `src/${path.relative(SRC, f).split(path.sep).join('/')}`)
      .filter((f) => !rows.includes(f) && !rows.some((r) => r.endsWith('/') && f.startsWith(r)));
    expect([...new Set(unlisted)]).toEqual([]);
  });
});
