import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LAUNCHER, resolveProgram, type Sandbox, type SandboxPolicy } from '@mcp-fleet/sandbox';

/**
 * One git process's confinement: the sandbox policy plus what @mcp-fleet/sandbox has no option for
 * yet (a regular file laid over a path, a directory bound at a second path). Kept here, small, until
 * the package grows them (SandboxPolicy.files / .binds).
 */
export interface GitConfinement extends SandboxPolicy {
  /** Read-only regular files with this content laid over `path` (the repository's config). */
  files?: { path: string; content: string }[];
  /** `source` (a real path) also visible at `dest` (the path git will use, through a symlink). */
  binds?: { source: string; dest: string; writable: boolean }[];
}

/** How to start git under a confinement: `file` with `prefix` before git's own arguments, in `env`. */
export interface PreparedGit {
  file: string;
  prefix: string[];
  env: Record<string, string>;
  dispose: () => void;
}

/**
 * Starts git inside the OS sandbox, one bubblewrap per git process, through the sandbox's
 * launcher (simple-git spawns by name; `capture` spawns the same way). With SANDBOX=off git runs
 * directly in the given environment and `files`/`binds` do not apply (the caller refuses what
 * they would have hidden).
 */
export class GitSandbox {
  constructor(
    readonly sandbox: Sandbox,
    private readonly bwrap: string,
    /** PATH for the launcher itself (bubblewrap is looked up on it). */
    private readonly hostPath: string,
  ) {}

  get confined(): boolean {
    return this.sandbox.status.mode === 'bwrap';
  }

  /** Throws NOT_CONFIGURED (what to do) when no sandbox can be made and SANDBOX=off was not chosen; ENOENT without git. */
  prepare(confinement: GitConfinement): PreparedGit {
    this.sandbox.assertUsable();
    const git = resolveProgram('git', confinement.env.PATH);
    if (git === undefined) throw Object.assign(new Error('spawn git ENOENT'), { code: 'ENOENT' });
    if (!this.confined) return { file: git, prefix: [], env: confinement.env, dispose: () => undefined };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-git-'));
    const dispose = () => fs.rmSync(dir, { recursive: true, force: true });
    try {
      const options = this.sandbox.options(confinement);
      const extra: string[] = [];
      for (const b of confinement.binds ?? []) extra.push(b.writable ? '--bind' : '--ro-bind', b.source, b.dest);
      for (const [i, f] of (confinement.files ?? []).entries()) {
        const file = path.join(dir, `file-${i}`);
        fs.writeFileSync(file, f.content, { mode: 0o600 });
        extra.push('--ro-bind', file, f.path);
      }
      // Laid over the mounts, before the final --chdir.
      const chdir = options.lastIndexOf('--chdir');
      options.splice(chdir, 0, ...extra);
      const argsFile = path.join(dir, 'args');
      fs.writeFileSync(argsFile, options.map((a) => `${a}\0`).join(''), { mode: 0o600 });
      return {
        file: LAUNCHER,
        prefix: [git],
        env: { PATH: this.hostPath, FLEET_SANDBOX_ARGS: argsFile, FLEET_SANDBOX_BWRAP: this.bwrap },
        dispose,
      };
    } catch (err) {
      dispose();
      throw err;
    }
  }
}
