/**
 * The fleet's own state (DATA_DIR: the secrets UI's store and admin token, the exported secret env
 * files that configure services at their next start, API keys, logs) must lie outside every
 * directory the tools serve: a file tool that can read it leaks secrets, and one that can write it
 * reconfigures the fleet. The launcher refuses to start when one overlaps a root, comparing real
 * paths, so a symlink, `..`, a trailing slash or a relative spelling cannot hide the overlap.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '@mcp-fleet/inventory';

const MAX_LINKS = 40;

/**
 * The path the kernel reaches for `p`: symlinks followed and `..` taken after them, as opening it
 * would. The part that does not exist yet is appended to the real path of its existing parent.
 */
export function realPathOf(p: string, cwd = process.cwd()): string {
  // a stack of the segments still to walk, the next on top
  const pending = (path.isAbsolute(p) ? p : `${cwd}/${p}`).split('/').reverse();
  let current = '/';
  let links = 0;
  while (pending.length > 0) {
    const segment = pending.pop()!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, segment);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      // not there (yet): the rest is where it will be created
      return path.resolve(next, ...pending.reverse());
    }
    if (stat.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new Error(`${p}: more than ${MAX_LINKS} symbolic links`);
      const target = fs.readlinkSync(next);
      if (path.isAbsolute(target)) current = '/';
      pending.push(...target.split('/').reverse());
      continue;
    }
    current = next;
  }
  return current;
}

/**
 * Both readings of `p`: the kernel's (realPathOf) and that of code which normalises `..` first
 * (path.resolve, then the real path), as a service may do; they differ after a symlink.
 */
export function realPathsOf(p: string): string[] {
  return [...new Set([realPathOf(p), realPathOf(path.resolve(p))])];
}

const within = (child: string, parent: string) => child === parent || parent === '/' || child.startsWith(parent + path.sep);

/** How `a` lies to `b` (real paths), or undefined when apart. */
export function overlap(a: string, b: string): 'is' | 'is inside' | 'contains' | undefined {
  if (a === b) return 'is';
  if (within(a, b)) return 'is inside';
  if (within(b, a)) return 'contains';
  return undefined;
}

/** Variables naming the fleet's state outside DATA_DIR: each must stay outside the roots too. */
export const STATE_VARIABLES = [
  'SECRETS_EXPORT_DIR',
  'SECRETS_UI_ADMIN_TOKEN_FILE',
  'VAULT_TOKEN_FILE',
  'API_KEYS_FILE',
  'MCP_SERVERS_FILE',
  'AUDIT_LOG_FILE',
  'SESSION_DB',
] as const;

/** "a, b," -> ["a", "b"], as the services read their comma-separated lists. */
export const csvList = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface StateLayout {
  dataDir: string;
  logDir: string;
  /** WORKSPACE_ROOTS as the services receive them. */
  workspaceRoots: string[];
  /** LOG_ROOTS as log-mcp receives them. */
  logRoots: string[];
  /** Each service's environment, for the state variables it holds (an exported secrets file may set one). */
  envs: { id: string; env: Env }[];
}

/**
 * Every overlap of the fleet's state with a directory the tools serve, as sentences saying what to
 * change; empty when none. log-mcp's roots may lie inside the log directory, nowhere else in the state.
 */
export function stateOverlaps(layout: StateLayout): string[] {
  const state: { what: string; path: string }[] = realPathsOf(layout.dataDir).map((p) => ({ what: 'DATA_DIR', path: p }));
  for (const { id, env } of layout.envs)
    for (const name of STATE_VARIABLES) {
      const value = env[name]?.trim();
      if (value && !(name === 'AUDIT_LOG_FILE' && value === 'off'))
        for (const p of realPathsOf(value)) state.push({ what: `${name} of ${id}`, path: p });
    }
  const logDir = realPathOf(layout.logDir);
  const problems: string[] = [];
  const fix = (what: string) =>
    what === 'DATA_DIR'
      ? 'set FLEET_DATA_DIR (or DATA_DIR) to a directory outside every root, or leave it unset for ~/.local/state/mcp-fleet'
      : `move ${what.split(' ')[0]} outside every root`;
  for (const real of layout.workspaceRoots.flatMap(realPathsOf)) {
    for (const s of state) {
      const how = overlap(s.path, real);
      if (how)
        problems.push(
          `${s.what} (${s.path}) ${how} the workspace root ${real} (WORKSPACE_ROOTS), where the file tools could read and write it: ${fix(s.what)}, or narrow WORKSPACE_ROOTS.`,
        );
    }
  }
  for (const real of layout.logRoots.flatMap(realPathsOf)) {
    if (within(real, logDir)) continue;
    for (const s of state) {
      const how = overlap(s.path, real);
      if (how)
        problems.push(
          `${s.what} (${s.path}) ${how} the log root ${real} (LOG_ROOTS), where log-mcp could read it: keep LOG_ROOTS to ${logDir} and other log folders.`,
        );
    }
  }
  return [...new Set(problems)];
}
