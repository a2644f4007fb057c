import type { ToolDefinition } from '@mcp-fleet/kit';
import type { GitDeps } from '../git/deps';
import { gitCommitTool } from './git-commit';
import { gitDiffTool } from './git-diff';
import { gitLogTool } from './git-log';
import { gitPushTool } from './git-push';
import { gitStatusTool } from './git-status';

export function createTools(deps: GitDeps): ToolDefinition[] {
  return [gitStatusTool(deps), gitLogTool(deps), gitDiffTool(deps), gitCommitTool(deps), gitPushTool(deps)];
}
