import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { SERVICE_ID, type Config } from './config';
import { gitEnv, type GitDeps } from './git/repo';
import { createTools } from './tools';

const execFileAsync = promisify(execFile);

export interface GitAppDeps {
  config: Config;
  logger: Logger;
}

/** `/git/{path}/...`: the wildcard (slashes and %2F allowed) becomes the tool's `path`. */
export async function createApp({ config, logger }: GitAppDeps): Promise<ServiceApp> {
  const workspace = await Workspace.open(config.WORKSPACE_ROOTS);
  const deps: GitDeps = { config, workspace, logger };
  const tools = createTools(deps);
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools,
    healthChecks: [
      {
        name: 'git',
        check: async () => {
          const { stdout } = await execFileAsync('git', ['--version'], { env: gitEnv(deps), timeout: 2000 });
          return { version: stdout.trim(), workspaceRoots: workspace.roots.length };
        },
      },
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
