/**
 * Where the fleet's build lives and whether it is current. Kept free of esbuild so the launcher
 * can check a build on every start for a few milliseconds (a stat of each input file).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const DIST_DIR = 'dist';
/** Bumped when the build's shape changes, so an older build is rebuilt rather than run (2: dist/fleet/check.js). */
export const BUILD_FORMAT = 2;

export interface BuildStamp {
  format: number;
  /** When the build started reading its inputs (ms since the epoch): an input modified later is newer than the build. */
  builtAt: number;
  esbuild: string;
  /** The service ids built, each at dist/services/<id>/server.js. */
  services: string[];
  /** Every file the bundles were made from, repo-relative (sources, the workspace packages' package.json). */
  inputs: string[];
}

export const stampFile = (root = REPO_ROOT) => path.join(root, DIST_DIR, 'build.json');

/** The launcher's source, built to dist/fleet/cli.js. */
export const LAUNCHER_SOURCE = 'scripts/fleet/cli.ts';
export const builtLauncher = (root = REPO_ROOT) => path.join(root, DIST_DIR, 'fleet', 'cli.js');
/** ./fleet's check of the build before it runs the built launcher (check.ts): exits 1 when the build is stale. */
export const builtCheck = (root = REPO_ROOT) => path.join(root, DIST_DIR, 'fleet', 'check.js');

/** The built entry of a service (a CommonJS bundle of its source and the workspace packages). */
export const builtEntry = (id: string, root = REPO_ROOT) => path.join(root, DIST_DIR, 'services', id, 'server.js');

/**
 * The source file of a service's configuration schema (it exports `configSchema`, a zod object):
 * `src/config.ts`, or `src/core/config.ts` for a service whose files sit in folders (the gateway);
 * undefined for a service without one.
 */
export function configSource(id: string, root = REPO_ROOT): string | undefined {
  return ['config.ts', path.join('core', 'config.ts')].map((f) => path.join(root, 'services', id, 'src', f)).find((f) => fs.existsSync(f));
}

/** A service's configuration schema, built to read the variables it declares (declared-env.ts). */
export const builtConfig = (id: string, root = REPO_ROOT) => path.join(root, DIST_DIR, 'services', id, 'config.js');
/** Those variables by service id, for the built launcher, which starts each service with only its own. */
export const declaredEnvFile = (root = REPO_ROOT) => path.join(root, DIST_DIR, 'declared-env.json');

/** Every service with an entry point, sorted: services/<id>/src/server.ts. */
export function serviceIds(root = REPO_ROOT): string[] {
  const dir = path.join(root, 'services');
  return fs
    .readdirSync(dir)
    .filter((id) => fs.existsSync(path.join(dir, id, 'src', 'server.ts')))
    .sort();
}

/**
 * Files whose change makes every bundle stale although no bundle reads them: the build's own
 * code (how bundles are made) and the installed dependencies (what the bundles require at run time).
 */
export const BUILD_DEPENDS_ON = ['scripts/build/build.ts', 'scripts/build/stamp.ts', 'node_modules/.modules.yaml'];

export function readStamp(root = REPO_ROOT): BuildStamp | undefined {
  try {
    return JSON.parse(fs.readFileSync(stampFile(root), 'utf8')) as BuildStamp;
  } catch {
    return undefined;
  }
}

/**
 * Why the build in dist/ cannot be run as it is, or undefined when it is current: no build, a
 * build of another format, a service added or removed since, or any input (or the build's own
 * code, or the lockfile) modified after the build started. Costs one stat per input.
 */
export function staleReason(root = REPO_ROOT): string | undefined {
  const stamp = readStamp(root);
  if (!stamp) return `there is no build yet (${path.relative(root, stampFile(root))} is missing)`;
  if (stamp.format !== BUILD_FORMAT) return `the build in ${DIST_DIR}/ was made by another version of the build script`;
  const ids = serviceIds(root);
  const added = ids.filter((id) => !stamp.services.includes(id));
  if (added.length) return `service${added.length > 1 ? 's' : ''} ${added.join(', ')} not built yet`;
  for (const file of [builtLauncher(root), builtCheck(root), declaredEnvFile(root)])
    if (!fs.existsSync(file)) return `${path.relative(root, file)} is missing`;
  for (const id of stamp.services) {
    if (!ids.includes(id)) return `service ${id} was built but its source is gone`;
    if (!fs.existsSync(builtEntry(id, root))) return `${path.relative(root, builtEntry(id, root))} is missing`;
  }
  for (const rel of [...stamp.inputs, ...BUILD_DEPENDS_ON]) {
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(path.join(root, rel)).mtimeMs;
    } catch {
      if (BUILD_DEPENDS_ON.includes(rel)) continue;
      return `${rel} was removed since the build`;
    }
    if (mtimeMs > stamp.builtAt) return `${rel} changed since the build`;
  }
  return undefined;
}

/**
 * The launcher's check before it starts built services: a stale build is made again by the build's
 * command line in a process of its own (the launcher then holds none of esbuild's memory), which
 * says why and prints esbuild's errors; a failed build throws, naming what to do instead.
 */
export function ensureBuiltApart(root = REPO_ROOT): void {
  const reason = staleReason(root);
  if (!reason) return;
  // tsx as this checkout installed it (cwd), the build command of the checkout built
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'build', 'run.ts'), '--if-stale'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0)
    throw new Error(
      `the build (${reason}) did not succeed: see its errors above. Fix them, or run from the TypeScript source: ./fleet up --dev`,
    );
}
