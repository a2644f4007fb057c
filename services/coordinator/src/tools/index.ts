import type { ToolDefinition } from '@mcp-fleet/kit';
import { dbQuery } from './db-query';
import { dbSchema } from './db-schema';
import { executeCommand } from './execute-command';
import { fileList } from './file-list';
import { fileRead } from './file-read';
import { fileWrite } from './file-write';
import { forwardTool, type ForwardSpec, type ToolDeps } from './forward';
import { gitDiff } from './git-diff';
import { gitLog } from './git-log';
import { gitStatus } from './git-status';
import { listMemories } from './list-memories';
import { memoryStats } from './memory-stats';
import { researchQuery } from './research-query';
import { searchMemories } from './search-memories';
import { storeMemory } from './store-memory';
import { systemInfo } from './system-info';
import { transcribeAudio } from './transcribe-audio';
import { transcribeUrl } from './transcribe-url';

export type { ToolDeps } from './forward';

/** The contract's argument table (platform-interface.md, "Tool arguments on the alternate coordinator surface"), in its order. */
export const FORWARDED: readonly ForwardSpec[] = [
  fileRead,
  fileWrite,
  fileList,
  gitStatus,
  gitLog,
  gitDiff,
  executeCommand,
  systemInfo,
  dbQuery,
  dbSchema,
  storeMemory,
  searchMemories,
  listMemories,
  memoryStats,
  transcribeAudio,
  transcribeUrl,
  researchQuery,
];

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return FORWARDED.map((spec) => forwardTool(deps, spec));
}
