import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { checkRefName, checkRemoteName } from '../git/refs';
import { planPush } from '../git/push-targets';
import { callTimeoutMs, openRepo } from '@mcp-fleet/git';
import type { GitDeps } from '../git/deps';
import { repoPath, repoShape } from './repo-arg';

export function gitPushTool(deps: GitDeps) {
  const { config } = deps;
  const allow = config.GIT_PUSH_REMOTES_ALLOWLIST;
  return defineTool({
    name: 'git_push',
    title: 'Git push',
    description:
      'Push one local branch (default: the current one) of a repository inside the workspace roots to a configured remote (a remote NAME such as origin, never a URL). ' +
      'Never forces: a rejected (non-fast-forward) push is a CONFLICT; other remote failures are UPSTREAM_ERROR. ' +
      `Every push URL of the remote is checked: local repositories must lie inside the workspace roots, network hosts must pass the outbound address policy; transports: ${config.GIT_PUSH_PROTOCOLS.join(', ')}. No hook runs on either side. ` +
      (config.GIT_ALLOW_PUSH ? '' : 'Disabled on this service (GIT_ALLOW_PUSH=false). ') +
      (allow.length > 0 ? `Allowed remotes: ${allow.join(', ')}. ` : '') +
      `Each git process, the push included, is limited to ${config.GIT_TIMEOUT_MS} ms (GIT_TIMEOUT_MS).`,
    input: z
      .object({
        ...repoShape,
        remote: z.string().min(1).max(255).default('origin').describe('Name of a configured remote (default origin).'),
        branch: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe('Local branch to push to the same name on the remote; default the current branch.'),
        setUpstream: z.boolean().default(false).describe('Make the remote branch the upstream of the local one.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    timeoutMs: callTimeoutMs(config),
    handler: async (args, ctx) => {
      if (!config.GIT_ALLOW_PUSH) {
        throw new AppError('FORBIDDEN', 'Pushing is disabled on this service (GIT_ALLOW_PUSH=false); ask the operator to enable it.');
      }
      const remote = checkRemoteName(args.remote, 'remote');
      if (allow.length > 0 && !allow.includes(remote)) {
        throw new AppError(
          'FORBIDDEN',
          `Pushing to remote "${remote}" is not allowed; allowed remotes: ${allow.join(', ')} (GIT_PUSH_REMOTES_ALLOWLIST).`,
          {
            details: [{ path: 'remote', message: 'not in GIT_PUSH_REMOTES_ALLOWLIST' }],
          },
        );
      }
      const requested = args.branch === undefined ? undefined : checkRefName(args.branch, 'branch');
      const repo = await openRepo(deps, repoPath(args), ctx.signal);
      const remotes = await repo.run('git remote', (git) => git.getRemotes(false));
      if (!remotes.some((r) => r.name === remote)) {
        const names = remotes.map((r) => r.name);
        throw new AppError(
          'NOT_FOUND',
          `The repository has no remote named "${remote}"; ${names.length > 0 ? `configured remotes: ${names.join(', ')}` : 'it has no remotes configured'}.`,
          { details: [{ path: 'remote', message: 'no such remote' }] },
        );
      }
      // Every URL git would push to, as git itself reads the (sanitized) config; each one is checked.
      const urls = (await repo.run('git remote get-url', (git) => git.raw(['remote', 'get-url', '--push', '--all', remote])))
        .split('\n')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      const reach = await planPush(deps, repo, remote, urls);
      let branch = requested;
      if (branch === undefined) {
        const current = (
          await repo.run('git symbolic-ref', (git) => git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => ''))
        ).trim();
        if (!current) {
          throw new AppError('VALIDATION_ERROR', 'HEAD is detached, so there is no current branch to push; name the branch to push.', {
            details: [{ path: 'branch', message: 'required when HEAD is detached' }],
          });
        }
        branch = checkRefName(current, 'branch');
      }
      if (!(await repo.revExists(`refs/heads/${branch}`))) {
        throw new AppError('NOT_FOUND', `There is no local branch "${branch}" to push.`, {
          details: [{ path: 'branch', message: 'no such branch' }],
        });
      }
      const refspec = `refs/heads/${branch}:refs/heads/${branch}`;
      const result = await repo.run('git push', (git) => git.push(remote, refspec, reach.pushOptions), reach);
      if (args.setUpstream) await repo.setUpstream(branch, remote);
      const upToDate = result.pushed.length > 0 && result.pushed.every((p) => p.alreadyUpdated);
      return {
        repository: repo.relative || '.',
        remote,
        branch,
        pushed: !upToDate,
        upToDate,
        setUpstream: args.setUpstream,
        ...(result.update ? { from: result.update.hash.from || null, to: result.update.hash.to } : {}),
      };
    },
  });
}
