/** Every operator script: shellcheck-clean, executable, with --help, and a clear refusal of a bad option. */
import fs from 'node:fs';
import path from 'node:path';
import { describeWithProgram } from '@mcp-fleet/testing';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../support/fleet-process';
import { CONTRACT_SCRIPTS, runScript } from '../support/run-script';

function shellScripts(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.sh'))
    .map((e) => path.relative(REPO_ROOT, path.join(e.parentPath, e.name)))
    .sort();
}

const scripts = shellScripts(path.join(REPO_ROOT, 'scripts'));
const present = CONTRACT_SCRIPTS.filter((s) => fs.existsSync(path.join(REPO_ROOT, s)));

describeWithProgram('shellcheck', 'shellcheck', 'operator scripts', () => {
  it('has every script of the contract', () => {
    expect(CONTRACT_SCRIPTS.filter((s) => !present.includes(s))).toEqual([]);
  });

  it('passes shellcheck with no finding in any scripts/**/*.sh', () => {
    const res = spawnSync('shellcheck', ['--format=gcc', ...scripts], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it.each(present)('%s is executable, answers --help and refuses an unknown option', async (script) => {
    expect(fs.statSync(path.join(REPO_ROOT, script)).mode & 0o111).not.toBe(0);
    const help = await runScript(script, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: /m);
    const bad = await runScript(script, ['--no-such-option']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/no-such-option|unknown|usage/i);
  });
});
