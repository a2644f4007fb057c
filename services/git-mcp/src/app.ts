import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { coerceQuery, createServiceApp, toolToJson, type Logger, type ServiceApp, type ToolDefinition } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import type { Request } from 'express';
import { SERVICE_ID, type Config } from './config';
import { gitEnv, type GitDeps } from './git/repo';
import { createTools } from './tools';

const execFileAsync = promisify(execFile);

export interface GitAppDeps {
  config: Config;
  logger: Logger;
}

/** `/git/{path}/...`: the wildcard (slashes and %2F allowed) becomes the tool's `path`. */
function repoRoute(tool: ToolDefinition, method: 'get' | 'post') {
  const schema = toolToJson(tool).inputSchema;
  return (req: Request) => {
    const raw = (req.params as Record<string, string | string[]>).repo;
    const repo = Array.isArray(raw) ? raw.join('/') : raw;
    const fields =
      method === 'get'
        ? coerceQuery(req.query as Record<string, unknown>, schema)
        : req.body && typeof req.body === 'object' && !Array.isArray(req.body)
          ? (req.body as Record<string, unknown>)
          : {};
    return { ...fields, path: repo };
  };
}

export async function createApp({ config, logger }: GitAppDeps): Promise<ServiceApp> {
  const workspace = await Workspace.open(config.WORKSPACE_ROOTS);
  const deps: GitDeps = { config, workspace, logger };
  const tools = createTools(deps);
  const byName = new Map(tools.map((t) => [t.name, t]));
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
        r.tool(method, `/git/*repo/${action}`, name, repoRoute(byName.get(name)!, method));
      }
    },
  });
}
