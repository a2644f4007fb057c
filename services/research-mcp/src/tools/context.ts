import type { Logger } from '@mcp-fleet/kit';
import type { Config } from '../config';
import type { Fetcher } from '../fetcher';
import type { SourceContext } from '../sources/types';

export interface ToolDeps {
  config: Config;
  fetcher: Fetcher;
  logger: Logger;
}

export const sourceContext = (deps: ToolDeps, signal: AbortSignal): SourceContext => ({
  fetcher: deps.fetcher,
  config: deps.config,
  signal,
});
