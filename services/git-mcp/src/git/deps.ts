import type { GitDeps as SharedGitDeps } from '@mcp-fleet/git';
import type { OutboundPolicy } from '@mcp-fleet/outbound';
import type { Config } from '../config';

/** What git-mcp's tools get: @mcp-fleet/git's dependencies with the service's whole config, and the outbound policy for pushes. */
export interface GitDeps extends SharedGitDeps {
  config: Config;
  /** Which network hosts a push may reach (OUTBOUND_ALLOWLIST). */
  outbound: OutboundPolicy;
}
