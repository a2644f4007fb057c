import fs from 'node:fs/promises';
import path from 'node:path';
import { buildGraph, parsePython, walkPythonFiles, type GraphEdge, type SourceFile } from '@mcp-fleet/code-graph';
import { AppError } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';

export const MAX_PROJECT_FILES = 5000;

/** Parse a Python file or every Python file under a directory (inside the workspace), at most 5000 files. */
export async function parseTree(
  deps: ToolDeps,
  input: string,
): Promise<{ root: string; files: SourceFile[]; truncated: boolean; single: boolean }> {
  const r = await deps.ws.resolve(input, { mustExist: true });
  const st = await fs.stat(r.absolute);
  const root = st.isDirectory() ? r.absolute : path.dirname(r.absolute);
  const rels = st.isDirectory() ? await walkPythonFiles(root, MAX_PROJECT_FILES) : { files: [path.basename(r.absolute)], truncated: false };
  if (!st.isDirectory() && !/\.pyi?$/.test(r.absolute))
    throw new AppError('VALIDATION_ERROR', `${input} is not a Python file (.py); analyze and tracer read Python.`);
  const files: SourceFile[] = [];
  for (const rel of rels.files) {
    const abs = path.join(root, rel);
    const size = (await fs.stat(abs)).size;
    if (size > deps.config.TOOLKIT_MAX_FILE_BYTES) continue;
    files.push({ path: rel, parsed: await parsePython(await fs.readFile(abs, 'utf8')) });
  }
  return { root, files, truncated: rels.truncated, single: !st.isDirectory() };
}

export type { GraphEdge };
export { buildGraph };
