import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import type { OutboundPolicy } from '@mcp-fleet/outbound';
import { receivePackCommand, shellQuote, type Reach, type Repo } from '@mcp-fleet/git';
import { classifyPushUrl, maskUrl, type PushTarget } from './remote-url';
import type { GitDeps } from './deps';

/**
 * Everything a push may reach, decided before git runs: every push URL of the remote (git's own
 * answer: `git remote get-url --push --all`, so several pushurls, or the urls when there is none)
 * is read as git reads it (remote-url.ts) and then
 * - a repository on this machine must be inside the workspace roots (its real path, found the way
 *   receive-pack finds it) and becomes the only writable directory besides the repository's git
 *   directory; its receive-pack gets the hardening through --receive-pack (hooks and all off);
 * - a network host must pass the outbound address policy (private, loopback, link-local and
 *   metadata addresses only when OUTBOUND_ALLOWLIST names them); git then gets the network, and
 *   the address that passed is pinned (http.curloptResolve, ssh HostName) so a second DNS answer
 *   cannot lead elsewhere; redirects and proxies are off (hardening.ts).
 * git runs in a sandbox holding only these, so a URL read differently by git still fails closed.
 */
export interface PushReach extends Reach {
  /** `--receive-pack=...` when a target is on this machine. */
  pushOptions: string[];
}

function refused(remote: string, url: string, why: string, code: 'FORBIDDEN' | 'NOT_FOUND' = 'FORBIDDEN'): AppError {
  return new AppError(code, `Remote "${remote}" pushes to ${JSON.stringify(maskUrl(url))}: ${why}`, {
    details: [{ path: 'remote', message: why }],
  });
}

/** git's is_git_directory: HEAD, and objects and refs (or a commondir file). */
async function isGitDirectory(dir: string): Promise<boolean> {
  const kind = async (name: string) => (await fs.stat(path.join(dir, name)).catch(() => undefined)) ?? undefined;
  const [head, objects, refs, common] = await Promise.all(['HEAD', 'objects', 'refs', 'commondir'].map(kind));
  return head !== undefined && ((objects?.isDirectory() === true && refs?.isDirectory() === true) || common?.isFile() === true);
}

/**
 * The repository a local push writes to, found as receive-pack's enter_repo finds it (the path
 * with "/.git", as is, with ".git/.git", with ".git"), and its real path inside the roots.
 */
async function localTarget(deps: GitDeps, repo: Repo, remote: string, target: Extract<PushTarget, { kind: 'local' }>) {
  const written = target.path.startsWith('/') ? target.path : `${repo.top}/${target.path}`;
  for (const suffix of ['/.git', '', '.git/.git', '.git']) {
    const candidate = written + suffix;
    const stat = await fs.stat(candidate).catch(() => undefined);
    if (stat === undefined) continue;
    if (stat.isFile())
      throw refused(remote, target.url, 'its .git is a file pointing elsewhere; set the remote to the repository it points to');
    if (!stat.isDirectory() || !(await isGitDirectory(candidate))) continue;
    // The kernel's reading of the path (symlinks, then ".."), checked like any path a caller names.
    const real = await fs.realpath(candidate);
    const resolved = await deps.workspace.resolve(real, { mustExist: true, field: 'remote' }).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'FORBIDDEN'
        ? refused(
            remote,
            target.url,
            `that repository lies outside the workspace roots (or is protected), and pushing writes to it. ${err.message}`,
          )
        : err;
    });
    const lexical = path.resolve(candidate);
    if (lexical === resolved.absolute) return { real: resolved.absolute };
    // Reached through a symlink: in the sandbox the real directory is bound at the written path too,
    // which leads there only when ".." does not follow the symlink.
    if ((await fs.realpath(lexical).catch(() => undefined)) !== resolved.absolute) {
      throw refused(remote, target.url, 'its path goes through a symlink and then ".."; write the path without them');
    }
    return { real: resolved.absolute, bind: { source: resolved.absolute, dest: lexical, writable: true } };
  }
  throw refused(remote, target.url, 'there is no git repository at that path', 'NOT_FOUND');
}

/** The first address of `host` the outbound policy allows (throws FORBIDDEN naming OUTBOUND_ALLOWLIST otherwise). */
async function approvedAddress(policy: OutboundPolicy, remote: string, target: Extract<PushTarget, { kind: 'network' }>): Promise<string> {
  try {
    return await new Promise<string>((resolve, reject) =>
      policy.lookup(target.host, { all: false }, ((err: NodeJS.ErrnoException | null, address: string) =>
        err ? reject(err) : resolve(address)) as Parameters<OutboundPolicy['lookup']>[2]),
    );
  } catch (err) {
    if (err instanceof AppError) throw refused(remote, target.url, err.message);
    throw new AppError(
      'UPSTREAM_ERROR',
      `Remote "${remote}": the host "${target.host}" could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check the remote's URL and the network.`,
    );
  }
}

/** ssh to `host` at the checked `address` only, non-interactive, reading nothing of the service user's ssh setup. */
export function sshCommand(host: string, address: string, knownHosts: string | undefined): string {
  return [
    'ssh',
    '-F',
    '/dev/null',
    ...[
      'BatchMode=yes',
      'StrictHostKeyChecking=yes',
      `UserKnownHostsFile=${knownHosts ?? '/dev/null'}`,
      'GlobalKnownHostsFile=/dev/null',
      `HostName=${address}`,
      `HostKeyAlias=${host}`,
      'ProxyCommand=none',
      'ProxyJump=none',
      'PermitLocalCommand=no',
      'ControlMaster=no',
      'ControlPath=none',
      'ForwardAgent=no',
    ].flatMap((o) => ['-o', o]),
  ]
    .map((w) => (/^[A-Za-z0-9_./=:@-]+$/.test(w) ? w : shellQuote(w)))
    .join(' ');
}

export async function planPush(deps: GitDeps, repo: Repo, remote: string, urls: string[]): Promise<PushReach> {
  const { config } = deps;
  const reach: PushReach = {
    write: true,
    writable: [],
    binds: [],
    readOnly: [],
    settings: [],
    env: {},
    pushOptions: [],
    fallback: 'UPSTREAM_ERROR',
  };
  const protocols = new Set<string>();
  const ssh = new Map<string, string>();
  if (urls.length === 0)
    throw new AppError('NOT_FOUND', `Remote "${remote}" has no URL to push to.`, { details: [{ path: 'remote', message: 'no url' }] });
  for (const url of urls) {
    const target = classifyPushUrl(remote, url);
    if (!config.GIT_PUSH_PROTOCOLS.includes(target.protocol)) {
      throw refused(
        remote,
        url,
        `${target.protocol} pushes are not allowed here (GIT_PUSH_PROTOCOLS=${config.GIT_PUSH_PROTOCOLS.join(',')})`,
      );
    }
    protocols.add(target.protocol);
    if (target.kind === 'local') {
      const local = await localTarget(deps, repo, remote, target);
      reach.writable!.push(local.real);
      if (local.bind) reach.binds!.push(local.bind);
      continue;
    }
    const address = await approvedAddress(deps.outbound, remote, target);
    reach.network = true;
    if (target.protocol === 'ssh') ssh.set(target.host, address);
    else reach.settings!.push(['http.curloptResolve', `${target.host}:${target.port}:${address.includes(':') ? `[${address}]` : address}`]);
  }
  if (ssh.size > 0) {
    if (ssh.size > 1 || protocols.has('file')) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Remote "${remote}" pushes over ssh to several hosts, or to ssh and local paths at once; git-mcp pushes over ssh to one host per remote.`,
        {
          details: [{ path: 'remote', message: 'mixed ssh targets' }],
        },
      );
    }
    const [[host, address]] = [...ssh];
    reach.env!.GIT_SSH_COMMAND = sshCommand(host, address, config.GIT_SSH_KNOWN_HOSTS);
    if (config.GIT_SSH_KNOWN_HOSTS) reach.readOnly!.push(config.GIT_SSH_KNOWN_HOSTS);
    if (config.SSH_AGENT_SOCKET) {
      reach.env!.SSH_AUTH_SOCK = config.SSH_AGENT_SOCKET;
      reach.readOnly!.push(config.SSH_AGENT_SOCKET);
    }
  }
  // git hands a local receive-pack none of its command config: the hardening travels in the command.
  if (protocols.has('file')) reach.pushOptions.push(`--receive-pack=${receivePackCommand()}`);
  reach.protocols = [...protocols];
  return reach;
}
