import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import type fs from 'node:fs/promises';
import path from 'node:path';
import { buildGraph, parsePython, walkPythonFiles, type GraphEdge, type GraphNode, type ParsedFile } from '@mcp-fleet/code-graph';
import { AppError } from '@mcp-fleet/kit';
import { SqliteDb, type SqliteTx } from '@mcp-fleet/kit/sqlite';
import type { Workspace } from '@mcp-fleet/kit/workspace';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (id TEXT PRIMARY KEY, root TEXT NOT NULL UNIQUE, indexed_at TEXT, files INTEGER, truncated INTEGER);
CREATE TABLE IF NOT EXISTS files (project TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, parsed TEXT NOT NULL, error TEXT,
  PRIMARY KEY (project, path));
CREATE TABLE IF NOT EXISTS nodes (project TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, module TEXT NOT NULL,
  file TEXT NOT NULL, line INTEGER, end_line INTEGER, PRIMARY KEY (project, id));
CREATE INDEX IF NOT EXISTS nodes_name ON nodes(project, name);
CREATE TABLE IF NOT EXISTS edges (project TEXT NOT NULL, src TEXT NOT NULL, dst TEXT, target TEXT NOT NULL, kind TEXT NOT NULL,
  file TEXT NOT NULL, line INTEGER);
CREATE INDEX IF NOT EXISTS edges_src ON edges(project, src, kind);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(project, dst, kind);
CREATE INDEX IF NOT EXISTS edges_target ON edges(project, target, kind);
`;

export interface IndexReport {
  project: string;
  root: string;
  files: number;
  parsed: number;
  unchanged: number;
  removed: number;
  errors: { path: string; line: number; column: number; message: string }[];
  nodes: number;
  edges: number;
  truncated: boolean;
  ms: number;
}

export type NodeRow = GraphNode;
export type EdgeRow = GraphEdge;

/** Project id: a short stable hash of the resolved root. */
export function projectIdOf(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 16);
}

/** The root's name when the root is a package itself (holds `__init__.py`), so `json/decoder.py` is `json.decoder`. */
export function rootPackageOf(root: string, files: string[]): string | undefined {
  const name = path.basename(root);
  return /^[A-Za-z_]\w*$/.test(name) && files.some((f) => f === '__init__.py' || f === '__init__.pyi') ? name : undefined;
}

/** The code graphs of every indexed project in one SQLite file; each project's rows carry its id. */
export class GraphStore {
  private constructor(readonly db: SqliteDb) {}

  static async open(file: string): Promise<GraphStore> {
    const db = await SqliteDb.open(file);
    await db.exec(SCHEMA);
    return new GraphStore(db);
  }

  close(): Promise<void> {
    return this.db.close();
  }

  async projects(): Promise<{ id: string; root: string; indexed_at: string; files: number; truncated: number }[]> {
    return this.db.all('SELECT id, root, indexed_at, files, truncated FROM projects ORDER BY root');
  }

  /** Resolve a caller's `project` (id or root path already confined by the caller) to an indexed project id. */
  async requireProject(idOrRoot: string): Promise<string> {
    const row = await this.db.get<{ id: string }>('SELECT id FROM projects WHERE id = ? OR root = ?', [idOrRoot, idOrRoot]);
    if (!row) throw new AppError('NOT_FOUND', `Project "${idOrRoot}" is not indexed; call index_python_project with its root first.`);
    return row.id;
  }

  /**
   * Index root: files whose sha256 is unchanged keep their stored parse; changed and new files are
   * parsed; files gone from disk are dropped. The graph (nodes and edges) is rebuilt from the parses.
   */
  async index(root: string, limits: { maxFiles: number; maxFileBytes: number; signal?: AbortSignal }, ws: Workspace): Promise<IndexReport> {
    const started = performance.now();
    const project = projectIdOf(root);
    // every directory read through its verified descriptor; secret files, secret directories and DATA_DIR left out
    const walk = await walkPythonFiles(root, limits.maxFiles, {
      readDirectory: async (dir) => (await ws.readDirectory(dir)).entries,
      skip: (dir, name) => ws.isSecretEntry(dir, name),
    });
    const stored = new Map(
      (
        await this.db.all<{ path: string; hash: string; parsed: string; error: string | null }>(
          'SELECT path, hash, parsed, error FROM files WHERE project = ?',
          [project],
        )
      ).map((r) => [r.path, r]),
    );
    const parsedFiles: { path: string; parsed?: ParsedFile; stored?: string; hash: string; changed: boolean }[] = [];
    const errors: IndexReport['errors'] = [];
    let parsed = 0;
    let unchanged = 0;
    for (const rel of walk.files) {
      if (limits.signal?.aborted)
        throw new AppError('TIMEOUT', 'Indexing took longer than the call time limit; raise TOOL_TIMEOUT_MS or index a smaller root.');
      const abs = path.join(root, rel);
      let buf: Buffer;
      let handle: fs.FileHandle | undefined;
      try {
        // open, then verify (Workspace.openFile): nothing swapped in since the walk is read from outside the roots
        handle = (await ws.openFile(abs, constants.O_RDONLY | constants.O_NONBLOCK)).handle;
        const st = await handle.stat();
        if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' });
        if (st.size > limits.maxFileBytes) {
          errors.push({ path: rel, line: 0, column: 0, message: `larger than CODE_GRAPH_MAX_FILE_BYTES (${st.size} bytes); skipped` });
          continue;
        }
        buf = await handle.readFile();
      } catch (err) {
        const code = err instanceof AppError ? err.code : ((err as NodeJS.ErrnoException).code ?? 'error');
        errors.push({ path: rel, line: 0, column: 0, message: `unreadable: ${code}` });
        continue;
      } finally {
        await handle?.close();
      }
      const hash = createHash('sha256').update(buf).digest('hex');
      const prev = stored.get(rel);
      if (prev && prev.hash === hash) {
        // the stored parse is decoded only if the graph has to be rebuilt
        unchanged++;
        const storedError = prev.error ? (JSON.parse(prev.error) as ParsedFile['error']) : undefined;
        if (storedError) errors.push({ path: rel, ...storedError });
        parsedFiles.push({ path: rel, stored: prev.parsed, hash, changed: false });
        continue;
      }
      const p = await parsePython(buf.toString('utf8'));
      parsed++;
      if (p.error) errors.push({ path: rel, ...p.error });
      parsedFiles.push({ path: rel, parsed: p, hash, changed: true });
    }
    const present = new Set(parsedFiles.map((f) => f.path));
    const removed = [...stored.keys()].filter((p) => !present.has(p));
    const nothingChanged = removed.length === 0 && parsedFiles.every((f) => !f.changed);
    if (nothingChanged) {
      const counts = await this.db.get<{ nodes: number; edges: number }>(
        'SELECT (SELECT COUNT(*) FROM nodes WHERE project = ?1) AS nodes, (SELECT COUNT(*) FROM edges WHERE project = ?1) AS edges',
        [project],
      );
      if (counts && counts.nodes > 0) {
        await this.db.run('UPDATE projects SET indexed_at = ? WHERE id = ?', [new Date().toISOString(), project]);
        return {
          project,
          root,
          files: parsedFiles.length,
          parsed,
          unchanged,
          removed: 0,
          errors,
          nodes: counts.nodes,
          edges: counts.edges,
          truncated: walk.truncated,
          ms: Math.round(performance.now() - started),
        };
      }
    }
    for (const f of parsedFiles) f.parsed ??= JSON.parse(f.stored!) as ParsedFile;
    const graph = buildGraph(parsedFiles as { path: string; parsed: ParsedFile }[], { rootPackage: rootPackageOf(root, walk.files) });
    await this.db.transaction(async (tx) => {
      await tx.run(
        'INSERT INTO projects (id, root, indexed_at, files, truncated) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET indexed_at = excluded.indexed_at, files = excluded.files, truncated = excluded.truncated',
        [project, root, new Date().toISOString(), parsedFiles.length, walk.truncated ? 1 : 0],
      );
      for (const rel of removed) await tx.run('DELETE FROM files WHERE project = ? AND path = ?', [project, rel]);
      for (const f of parsedFiles) {
        if (!f.changed || !f.parsed) continue;
        await tx.run('INSERT OR REPLACE INTO files (project, path, hash, parsed, error) VALUES (?, ?, ?, ?, ?)', [
          project,
          f.path,
          f.hash,
          JSON.stringify(f.parsed),
          f.parsed.error ? JSON.stringify(f.parsed.error) : null,
        ]);
      }
      await tx.run('DELETE FROM nodes WHERE project = ?', [project]);
      await tx.run('DELETE FROM edges WHERE project = ?', [project]);
      await this.insertMany(
        tx,
        'INSERT OR REPLACE INTO nodes (project, id, kind, name, module, file, line, end_line) VALUES ',
        8,
        graph.nodes.map((n) => [project, n.id, n.kind, n.name, n.module, n.file, n.line, n.endLine]),
      );
      await this.insertMany(
        tx,
        'INSERT INTO edges (project, src, dst, target, kind, file, line) VALUES ',
        7,
        graph.edges.map((e) => [project, e.src, e.dst, e.target, e.kind, e.file, e.line]),
      );
    });
    return {
      project,
      root,
      files: parsedFiles.length,
      parsed,
      unchanged,
      removed: removed.length,
      errors,
      nodes: graph.nodes.length,
      edges: graph.edges.length,
      truncated: walk.truncated,
      ms: Math.round(performance.now() - started),
    };
  }

  private async insertMany(tx: SqliteTx, prefix: string, width: number, rows: unknown[][]): Promise<void> {
    const per = Math.floor(900 / width);
    const placeholder = `(${new Array(width).fill('?').join(',')})`;
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      await tx.run(prefix + chunk.map(() => placeholder).join(','), chunk.flat());
    }
  }

  async node(project: string, id: string): Promise<NodeRow | undefined> {
    return this.db.get<NodeRow>('SELECT id, kind, name, module, file, line, end_line AS endLine FROM nodes WHERE project = ? AND id = ?', [
      project,
      id,
    ]);
  }

  async nodesWhere(
    project: string,
    where: string,
    params: unknown[],
    limit: number,
    offset: number,
  ): Promise<{ rows: NodeRow[]; total: number }> {
    const total =
      (await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM nodes WHERE project = ? ${where}`, [project, ...params]))?.n ?? 0;
    const rows = await this.db.all<NodeRow>(
      `SELECT id, kind, name, module, file, line, end_line AS endLine FROM nodes WHERE project = ? ${where} ORDER BY id LIMIT ? OFFSET ?`,
      [project, ...params, limit, offset],
    );
    return { rows, total };
  }

  async edgesFrom(project: string, ids: string[], kinds: string[], direction: 'out' | 'in'): Promise<EdgeRow[]> {
    if (ids.length === 0 || kinds.length === 0) return [];
    const col = direction === 'out' ? 'src' : 'dst';
    const out: EdgeRow[] = [];
    for (let i = 0; i < ids.length; i += 400) {
      const chunk = ids.slice(i, i + 400);
      out.push(
        ...(await this.db.all<EdgeRow>(
          `SELECT src, dst, target, kind, file, line FROM edges WHERE project = ? AND ${col} IN (${chunk.map(() => '?').join(',')}) AND kind IN (${kinds.map(() => '?').join(',')}) ORDER BY file, line`,
          [project, ...chunk, ...kinds],
        )),
      );
    }
    return out;
  }

  async edgesByKind(project: string, kind: string): Promise<EdgeRow[]> {
    return this.db.all<EdgeRow>('SELECT src, dst, target, kind, file, line FROM edges WHERE project = ? AND kind = ? ORDER BY file, line', [
      project,
      kind,
    ]);
  }

  async edgesToTarget(project: string, kind: string, target: string): Promise<EdgeRow[]> {
    // Two indexed lookups (resolved target, or the callee as written) instead of an OR that scans.
    return this.db.all<EdgeRow>(
      `SELECT src, dst, target, kind, file, line FROM edges WHERE project = ?1 AND dst = ?3 AND kind = ?2
       UNION SELECT src, dst, target, kind, file, line FROM edges WHERE project = ?1 AND target = ?3 AND kind = ?2 AND dst IS NULL
       ORDER BY file, line`,
      [project, kind, target],
    );
  }
}
