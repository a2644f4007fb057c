import type { Logger } from '@mcp-fleet/kit';
import type { Workspace } from '@mcp-fleet/kit/workspace';
import type { Config } from './config';
import type { JobRunner } from './jobs';
import type { Programs } from './media/av';
import type { AvEngines } from './media/engines';
import type { InputDeps } from './media/input';

/** What the tools need, built once in app.ts. */
export interface MediaDeps {
  config: Config;
  logger: Logger;
  ws: Workspace;
  input: InputDeps;
  engines: AvEngines;
  programs: Programs;
  runner: JobRunner;
  /** The resolved output folder (MEDIA_OUTPUT_DIR inside the workspace roots). */
  outputDir: string;
}
