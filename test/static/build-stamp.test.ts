/**
 * When the build in dist/ may be run and when it is stale (scripts/build/stamp.ts), on a checkout
 * made in a temporary directory: no build, a current one, a source changed or removed since, a
 * service added, a bundle or the launcher's missing, a build of another format.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import {
  BUILD_FORMAT,
  builtCheck,
  builtEntry,
  builtLauncher,
  declaredEnvFile,
  ensureBuiltApart,
  staleReason,
  stampFile,
  type BuildStamp,
} from '../../scripts/build/stamp';

let tmp: { dir: string; cleanup: () => void };
let root: string;
const BUILT_AT = Date.now() - 60_000;

function write(rel: string, text = 'x', mtimeMs = BUILT_AT - 10_000) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  fs.utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
}

function writeStamp(stamp: Partial<BuildStamp> = {}) {
  const full: BuildStamp = {
    format: BUILD_FORMAT,
    builtAt: BUILT_AT,
    esbuild: '0.0.0',
    services: ['a-mcp', 'b-mcp'],
    inputs: ['services/a-mcp/src/server.ts', 'services/b-mcp/src/server.ts', 'packages/kit/src/index.ts'],
    ...stamp,
  };
  fs.mkdirSync(path.dirname(stampFile(root)), { recursive: true });
  fs.writeFileSync(stampFile(root), JSON.stringify(full));
}

beforeEach(() => {
  tmp = tempDir('build-stamp-');
  root = tmp.dir;
  for (const rel of ['services/a-mcp/src/server.ts', 'services/b-mcp/src/server.ts', 'packages/kit/src/index.ts']) write(rel);
  for (const file of [builtEntry('a-mcp', root), builtEntry('b-mcp', root), builtLauncher(root), builtCheck(root), declaredEnvFile(root)])
    write(path.relative(root, file), '{}', BUILT_AT + 1000);
  writeStamp();
});
afterEach(() => tmp.cleanup());

describe('staleReason', () => {
  it('finds a build current when nothing changed since it started', () => {
    expect(staleReason(root)).toBeUndefined();
  });

  it('asks for a build where there is none', () => {
    fs.rmSync(stampFile(root));
    expect(staleReason(root)).toMatch(/no build yet \(dist\/build\.json is missing\)/);
  });

  it('names the source modified after the build started, in a service or in a shared package', () => {
    write('packages/kit/src/index.ts', 'changed', BUILT_AT + 5);
    expect(staleReason(root)).toBe('packages/kit/src/index.ts changed since the build');
    write('packages/kit/src/index.ts', 'changed', BUILT_AT - 5);
    write('services/b-mcp/src/server.ts', 'changed', Date.now());
    expect(staleReason(root)).toBe('services/b-mcp/src/server.ts changed since the build');
  });

  it('names an input removed since the build', () => {
    fs.rmSync(path.join(root, 'packages/kit/src/index.ts'));
    expect(staleReason(root)).toBe('packages/kit/src/index.ts was removed since the build');
  });

  it('finds a service added since the build, or one built whose source is gone', () => {
    write('services/c-mcp/src/server.ts');
    expect(staleReason(root)).toBe('service c-mcp not built yet');
    fs.rmSync(path.join(root, 'services/c-mcp'), { recursive: true });
    fs.rmSync(path.join(root, 'services/b-mcp'), { recursive: true });
    expect(staleReason(root)).toBe('service b-mcp was built but its source is gone');
  });

  it("finds a missing bundle, launcher, variable list or ./fleet's check", () => {
    fs.rmSync(builtEntry('a-mcp', root));
    expect(staleReason(root)).toBe('dist/services/a-mcp/server.js is missing');
    write(path.relative(root, builtEntry('a-mcp', root)));
    fs.rmSync(builtLauncher(root));
    expect(staleReason(root)).toBe('dist/fleet/cli.js is missing');
    write(path.relative(root, builtLauncher(root)));
    fs.rmSync(declaredEnvFile(root));
    expect(staleReason(root)).toBe('dist/declared-env.json is missing');
    write(path.relative(root, declaredEnvFile(root)));
    fs.rmSync(builtCheck(root));
    expect(staleReason(root)).toBe('dist/fleet/check.js is missing');
  });

  it('rebuilds when the build script or the installed dependencies changed, or the build has another format', () => {
    write('node_modules/.modules.yaml', 'x', BUILT_AT + 10);
    expect(staleReason(root)).toBe('node_modules/.modules.yaml changed since the build');
    write('node_modules/.modules.yaml', 'x', BUILT_AT - 10);
    write('scripts/build/build.ts', 'x', BUILT_AT + 10);
    expect(staleReason(root)).toBe('scripts/build/build.ts changed since the build');
    write('scripts/build/build.ts', 'x', BUILT_AT - 10);
    expect(staleReason(root)).toBeUndefined();
    writeStamp({ format: BUILD_FORMAT + 1 });
    expect(staleReason(root)).toMatch(/another version of the build script/);
  });
});

describe('ensureBuiltApart (the launcher before it starts built services)', () => {
  // the fixture's build command stands in for scripts/build/run.ts: it records that it ran, and fails when told to
  const fakeBuild = (fail: boolean) =>
    write(
      'scripts/build/run.ts',
      `require('node:fs').writeFileSync(${JSON.stringify(path.join(root, 'ran'))}, process.argv.slice(2).join(' '));` +
        (fail ? "process.stderr.write('build: services/a-mcp/src/server.ts:1: No matching export\\n'); process.exit(1);" : ''),
    );

  it('does not build a current build', () => {
    fakeBuild(false);
    ensureBuiltApart(root);
    expect(fs.existsSync(path.join(root, 'ran'))).toBe(false);
  });

  it('builds a stale one in a process of its own, and refuses to go on when that build fails, saying what to do', () => {
    fakeBuild(false);
    write('packages/kit/src/index.ts', 'changed', Date.now());
    ensureBuiltApart(root);
    expect(fs.readFileSync(path.join(root, 'ran'), 'utf8')).toBe('--if-stale');
    fakeBuild(true);
    expect(() => ensureBuiltApart(root)).toThrow(
      /the build \(packages\/kit\/src\/index\.ts changed since the build\) did not succeed: see its errors above\. Fix them, or run from the TypeScript source: \.\/fleet up --dev/,
    );
  });
});
