import { AppError, createServiceApp, secretFilesFrom, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { OutboundPolicy } from '@mcp-fleet/outbound';
import { Sandbox, sandboxHealth } from '@mcp-fleet/sandbox';
import { SERVICE_ID, type Config } from './config';
import { gitEnv, GitSandbox, runGit } from '@mcp-fleet/git';
import type { GitDeps } from './git/deps';
import { createTools } from './tools';

export interface GitAppDeps {
  config: Config;
  logger: Logger;
  /** The outbound address policy for pushes (default: from OUTBOUND_ALLOWLIST). */
  outbound?: OutboundPolicy;
}

/** `/git/{path}/...`: the wildcard (slashes and %2F allowed) becomes the tool's `path`. */
export async function createApp({ config, logger, outbound }: GitAppDeps): Promise<ServiceApp> {
  const workspace = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const sandbox = Sandbox.open(config, logger);
  const deps: GitDeps = {
    config,
    workspace,
    logger,
    sandbox: new GitSandbox(sandbox, config.SANDBOX_BWRAP, config.GIT_BASE_ENV.PATH),
    outbound: outbound ?? OutboundPolicy.fromConfig(config),
  };
  let version: string | undefined;
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    healthChecks: [
      {
        name: 'git',
        check: async () => {
          // git runs only inside the sandbox; without one, the sandbox check says why.
          try {
            version ??= (
              await runGit(deps, AbortSignal.timeout(5000), 'git --version', { cwd: '/', env: gitEnv(deps) }, (git) =>
                git.raw(['--version']),
              )
            ).trim();
          } catch (err) {
            if (!(err instanceof AppError && err.code === 'NOT_CONFIGURED')) throw err;
          }
          return { version: version ?? null, workspaceRoots: workspace.roots.length };
        },
      },
      // Without a sandbox every tool is refused (NOT_CONFIGURED, saying what to do).
      { name: 'sandbox', required: false, check: () => sandboxHealth(sandbox) },
    ],
    routes: (r) => {
      for (const [method, action, name] of [
        ['get', 'status', 'git_status'],
        ['get', 'log', 'git_log'],
        ['get', 'diff', 'git_diff'],
        ['post', 'commit', 'git_commit'],
        ['post', 'push', 'git_push'],
      ] as const) {
        r.tool(method, `/git/*repo/${action}`, name, { rename: { repo: 'path' } });
      }
    },
  });
}
