import type { Logger } from '@mcp-fleet/kit';
import type { Config } from './config';
import type { InputDeps } from './inputs';
import type { TranscribeDeps } from './transcribe';

/** What the tools need, built once in app.ts. */
export interface TranscriberDeps {
  config: Config;
  logger: Logger;
  input: InputDeps;
  transcriber: TranscribeDeps;
}
