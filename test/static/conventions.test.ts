/** House-style rules that matter, checked rather than documented (STYLE.md #5, #6, #10). */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES } from '@mcp-fleet/inventory';
import { configSource } from '../../scripts/build/stamp';

const ROOT = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.includes('node_modules'));
}

const serviceIds = SERVICES.map((s) => s.id);
const serviceDirs = fs.readdirSync(path.join(ROOT, 'services'));

describe('conventions', () => {
  it('never lets a service import another service', () => {
    const offenders: string[] = [];
    for (const dir of serviceDirs) {
      for (const file of sourceFiles(path.join(ROOT, 'services', dir))) {
        const text = fs.readFileSync(file, 'utf8');
        for (const id of serviceIds) {
          if (id === dir) continue;
          if (new RegExp(`from ['"](@mcp-fleet/${id}|[./]*services/${id})['"/]`).test(text))
            offenders.push(`${path.relative(ROOT, file)} -> ${id}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('reads process.env only in config.ts (and the kit config module)', () => {
    const offenders = [...serviceDirs.map((d) => path.join(ROOT, 'services', d, 'src')), path.join(ROOT, 'packages')]
      .flatMap(sourceFiles)
      .filter((f) => !f.includes(`${path.sep}test${path.sep}`) && !f.includes(`packages${path.sep}testing${path.sep}`))
      .filter((f) => !f.endsWith(`${path.sep}config.ts`))
      .filter((f) => /process\.env\b/.test(fs.readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('builds configuration from the kit helpers (int, ms, bool, csv, optionalUrl), not local copies', () => {
    const configs = serviceDirs.flatMap((d) => configSource(d) ?? []);
    expect(configs.some((f) => f.endsWith(path.join('mega-orchestrator', 'src', 'core', 'config.ts')))).toBe(true);
    const offenders = configs.flatMap((f) => {
      const text = fs.readFileSync(f, 'utf8');
      const found: string[] = [];
      if (/z\.coerce\s*\.number\(\)\s*\.int\(\)\s*\.min\([^()]*\)\s*\.max\([^()]*\)\s*\.default\(/.test(text))
        found.push('a bounded integer chain (use int or ms)');
      const local = /^const (int|ms|count|bool|csv|optionalUrl|duration)\b/m.exec(text);
      if (local) found.push(`a local ${local[1]} helper`);
      return found.map((what) => `${path.relative(ROOT, f)}: ${what}`);
    });
    expect(offenders).toEqual([]);
  });

  it('keeps native and heavy modules out of the kit main entry (SQLite, workspace and the MCP endpoint are subpaths)', () => {
    const probe = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "require('@mcp-fleet/kit'); process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => /sqlite3|workspace\\.ts|@modelcontextprotocol/.test(k))))",
      ],
      { cwd: path.join(ROOT, 'packages', 'kit'), encoding: 'utf8' },
    );
    expect(probe.stderr).toBe('');
    expect(JSON.parse(probe.stdout)).toEqual([]);
  });

  it('uses node: specifiers for built-in modules', () => {
    const builtins = [
      'fs',
      'path',
      'os',
      'http',
      'https',
      'crypto',
      'child_process',
      'net',
      'tls',
      'dns',
      'url',
      'util',
      'stream',
      'events',
      'zlib',
      'worker_threads',
      'readline',
    ];
    const pattern = new RegExp(`from ['"](${builtins.join('|')})(/[a-z]+)?['"]`);
    const offenders = [path.join(ROOT, 'packages'), path.join(ROOT, 'services'), path.join(ROOT, 'scripts'), path.join(ROOT, 'test')]
      .flatMap(sourceFiles)
      .filter((f) => pattern.test(fs.readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('has no console.* in service or package source (use the kit logger)', () => {
    const offenders = [...serviceDirs.map((d) => path.join(ROOT, 'services', d, 'src')), path.join(ROOT, 'packages')]
      .flatMap(sourceFiles)
      .filter((f) => !f.includes(`${path.sep}test${path.sep}`))
      .filter((f) => /\bconsole\.(log|error|warn|info|debug)\(/.test(fs.readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
