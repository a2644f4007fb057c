/**
 * The fleet's build: one CommonJS bundle per service, dist/services/<id>/server.js, and one of the
 * launcher, dist/fleet/cli.js, run by plain `node` (no TypeScript loader at run time).
 * `./fleet setup` builds; `./fleet up` builds again first when the build is stale (stamp.ts says
 * why); run.ts is the command line.
 *
 * Why a bundle per service with esbuild (already installed, as tsx's compiler) rather than tsc:
 * the workspace packages export their TypeScript source (`exports: ./src/index.ts`), which a
 * bundle takes in as it is, where tsc output would need every package's exports rewritten; and one
 * file per service starts faster than hundreds of small ones. Third-party packages stay outside
 * the bundle (native ones like sqlite3 and sharp must; the rest keep their own file layout, which
 * some read at run time) and are required at run time exactly as from the source: each from the
 * directory of the workspace package that imports it, so pnpm's per-package node_modules resolve
 * as before. Code that locates files next to its own source (`__dirname`, `__filename`,
 * `require.resolve`: the sandbox's sandbox-exec script, the UI and catalog directories, the
 * tree-sitter grammar, ajv for config-mcp's worker threads) gets its source file's location in
 * the checkout, not the bundle's, so those files are used where they are.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import {
  BUILD_FORMAT,
  configSource,
  declaredEnvFile,
  DIST_DIR,
  LAUNCHER_SOURCE,
  REPO_ROOT,
  serviceIds,
  staleReason,
  stampFile,
  type BuildStamp,
} from './stamp';

/** The part of esbuild's API used here (esbuild is tsx's, so its types are not a dependency of the root). */
interface Esbuild {
  version: string;
  build(options: Record<string, unknown> & { plugins: Plugin[]; write: false; metafile: true }): Promise<{
    outputFiles: { path: string; contents: Uint8Array }[];
    metafile: { inputs: Record<string, unknown> };
  }>;
  transform(source: string, options: Record<string, unknown>): Promise<{ code: string }>;
  stop(): void;
}
type Result = { path?: string; external?: boolean; namespace?: string; pluginData?: unknown; errors?: { text: string }[] };
interface Plugin {
  name: string;
  setup(build: {
    onResolve(o: { filter: RegExp }, cb: (a: { path: string; kind: string; resolveDir: string }) => Result | undefined): void;
    onLoad(
      o: { filter: RegExp; namespace?: string },
      cb: (a: { path: string; pluginData?: unknown }) => Result | { contents: string; loader: string } | undefined | Promise<unknown>,
    ): void;
  }): void;
}

/** esbuild as tsx installed it (no dependency of its own to keep in step). */
function loadEsbuild(): Esbuild {
  const fromTsx = createRequire(fs.realpathSync(path.join(REPO_ROOT, 'node_modules', 'tsx', 'package.json')));
  return fromTsx('esbuild') as Esbuild;
}

const posix = (p: string) => p.split(path.sep).join('/');

/** The root-relative directory of the package (nearest package.json) that holds a directory. */
function ownerPackage(root: string, dir: string, cache: Map<string, string>): string {
  const hit = cache.get(dir);
  if (hit !== undefined) return hit;
  let d = dir;
  while (!fs.existsSync(path.join(d, 'package.json')) && path.dirname(d) !== d) d = path.dirname(d);
  const owner = posix(path.relative(root, d));
  cache.set(dir, owner);
  return owner;
}

/**
 * A bundle's first lines: the checkout's root (`depth` levels above the bundle's directory), a
 * path in it, and a `require` that resolves as code in a given checkout directory would.
 */
const banner = (depth: number) =>
  [
    '"use strict";',
    `const __fleetRoot = require("node:path").resolve(__dirname${', ".."'.repeat(depth)});`,
    'const __fleetPath = (rel) => require("node:path").join(__fleetRoot, rel);',
    'const __fleetRequires = new Map();',
    'const __fleetRequire = (rel) => {',
    '  let r = __fleetRequires.get(rel);',
    '  if (!r) __fleetRequires.set(rel, (r = require("node:module").createRequire(__fleetPath(rel) + "/")));',
    '  return r;',
    '};',
  ].join('\n');

const SOURCE_LOCATORS = /\b(__dirname|__filename|require\.resolve\()/;

function anchorPlugin(esbuild: Esbuild, root: string): Plugin {
  const owners = new Map<string, string>();
  return {
    name: 'fleet-anchor',
    setup(build) {
      // Third-party packages: external, required from the importing package's directory at run time.
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        if (args.path.startsWith('@mcp-fleet/')) return undefined; // the workspace's TypeScript, bundled
        const owner = ownerPackage(root, args.resolveDir, owners);
        return { path: `${owner}:${args.path}`, namespace: 'fleet-external', pluginData: { owner, spec: args.path } };
      });
      build.onLoad({ filter: /.*/, namespace: 'fleet-external' }, (args) => {
        const { owner, spec } = args.pluginData as { owner: string; spec: string };
        try {
          createRequire(path.join(root, owner) + '/').resolve(spec);
        } catch (err) {
          return { errors: [{ text: `${spec} (imported in ${owner}) does not resolve: ${(err as Error).message.split('\n')[0]}` }] };
        }
        // A module of its own, required where the import was: a dynamic import() stays lazy.
        return { contents: `module.exports = __fleetRequire(${JSON.stringify(owner)})(${JSON.stringify(spec)});`, loader: 'js' };
      });
      // Source that locates files beside itself gets its own location in the checkout: the
      // identifiers (not their spelling in strings or comments) replaced by esbuild's define.
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await fs.promises.readFile(args.path, 'utf8');
        if (!SOURCE_LOCATORS.test(source)) return undefined;
        const file = posix(path.relative(root, args.path));
        const dir = JSON.stringify(path.posix.dirname(file));
        const { code } = await esbuild.transform(source, {
          loader: 'ts',
          format: 'esm',
          target: 'node20',
          sourcefile: file,
          define: { __dirname: '__fleetSourceDir', __filename: '__fleetSourceFile', 'require.resolve': '__fleetSourceRequire.resolve' },
        });
        const locals = [
          `const __fleetSourceDir = __fleetPath(${dir});`,
          `const __fleetSourceFile = __fleetPath(${JSON.stringify(file)});`,
          `const __fleetSourceRequire = __fleetRequire(${dir});`,
        ];
        return { contents: `${locals.join(' ')}\n${code}`, loader: 'js' };
      });
    },
  };
}

/** Writes a file so a process starting meanwhile reads the old one or the new one, never half of one. */
function writeAtomic(file: string, contents: Uint8Array | string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, contents);
  fs.renameSync(tmp, file);
}

export interface BuildResult {
  services: string[];
  ms: number;
  bytes: number;
}

/**
 * Builds every service into dist/services/<id>/server.js and the launcher into dist/fleet/cli.js,
 * then writes the stamp (dist/build.json) last.
 */
export async function buildFleet(root = REPO_ROOT): Promise<BuildResult> {
  const esbuild = loadEsbuild();
  const builtAt = Date.now();
  const services = serviceIds(root);
  const common = {
    absWorkingDir: root,
    outdir: DIST_DIR,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // stack traces name the source file in the bundle's comments; the maps are used with NODE_OPTIONS=--enable-source-maps
    sourcemap: 'linked',
    sourcesContent: false,
    define: { __FLEET_BUILT__: 'true' },
    plugins: [anchorPlugin(esbuild, root)],
    metafile: true as const,
    write: false as const,
    logLevel: 'silent',
  };
  const results = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: services.flatMap((id) => [
        { in: `services/${id}/src/server.ts`, out: `services/${id}/server` },
        // read by the built launcher for the variables the service declares (scripts/fleet/service-env.ts)
        ...[configSource(id, root)].flatMap((file) => (file ? [{ in: path.relative(root, file), out: `services/${id}/config` }] : [])),
      ]),
      banner: { js: banner(3) },
    }),
    esbuild.build({
      ...common,
      entryPoints: [
        { in: LAUNCHER_SOURCE, out: 'fleet/cli' },
        { in: 'scripts/build/declared-env.ts', out: 'fleet/declared-env' },
        // ./fleet's check before it runs the built launcher (no tsx when the build is current)
        { in: 'scripts/build/check.ts', out: 'fleet/check' },
      ],
      banner: { js: banner(2) },
    }),
  ]).finally(() => esbuild.stop()); // its service process would stay with the launcher otherwise
  let bytes = 0;
  for (const out of results.flatMap((r) => r.outputFiles)) {
    writeAtomic(out.path, out.contents);
    bytes += out.contents.byteLength;
  }
  // the variables each service declares, read from the built schemas in a process of its own
  const declared = spawnSync(process.execPath, [path.join(root, DIST_DIR, 'fleet', 'declared-env.js')], { encoding: 'utf8' });
  if (declared.status !== 0) throw new Error(`reading the services' configuration schemas failed: ${declared.stderr.trim()}`);
  writeAtomic(declaredEnvFile(root), declared.stdout);
  const inputs = [...new Set(results.flatMap((r) => Object.keys(r.metafile.inputs)))]
    .filter((i) => !i.startsWith('fleet-external:'))
    .map(posix)
    .sort();
  const stamp: BuildStamp = { format: BUILD_FORMAT, builtAt, esbuild: esbuild.version, services, inputs };
  writeAtomic(stampFile(root), JSON.stringify(stamp, null, 2) + '\n');
  return { services, ms: Date.now() - builtAt, bytes };
}

/** esbuild's errors (the first ten, with file and line), or the error's message. */
function buildErrors(err: unknown): string {
  const errors = (err as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
  if (!errors?.length) return `  ${(err as Error).message}`;
  return errors
    .slice(0, 10)
    .map((e) => `  ${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`)
    .join('\n');
}

/** Builds, saying what was built; a failed build is an error with esbuild's messages and what to do instead. */
export async function buildOrExplain(log: (line: string) => void, root = REPO_ROOT): Promise<void> {
  try {
    const built = await buildFleet(root);
    log(
      `built ${built.services.length} services and the launcher in ${(built.ms / 1000).toFixed(1)} s (${DIST_DIR}/, ${(built.bytes / 2 ** 20).toFixed(1)} MiB).`,
    );
  } catch (err) {
    throw new Error(
      `the build failed, so the services cannot start from it:\n${buildErrors(err)}\nFix the source, or run from the TypeScript source without a build: ./fleet up --dev`,
    );
  }
}

/**
 * The launcher's check before it starts built services: rebuilds a stale build (saying why), or
 * throws with the build's errors and what to do instead.
 */
export async function ensureBuilt(log: (line: string) => void, root = REPO_ROOT): Promise<void> {
  const reason = staleReason(root);
  if (!reason) return;
  log(`building the services: ${reason}...`);
  await buildOrExplain(log, root);
}
