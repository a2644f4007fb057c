import type { Authorizer } from '../auth/auth';
import type { Logger } from '@mcp-fleet/kit';
import type { ServiceEntry } from '@mcp-fleet/inventory';
import type { Config } from './config';
import type { Dispatcher } from './dispatch';
import type { Providers } from '../downstream/providers';
import type { Registry } from './registry';
import type { ToolResolver } from './tool-resolver';
import type { CallHistory } from '../history/call-history';
import type { GatewayStats } from './stats';
import type { TaskManager } from './tasks';
import type { ResourceWatch } from '../downstream/resource-watch';
import type { VirtualServerReports } from './virtual-servers/report';
import type { Discovery } from './discovery/discovery';

/**
 * The gateway's parts shared by the whole process (the protocol layer's own: mcp/context.ts McpContext;
 * what one request carries: mcp/request-context.ts RequestContext).
 */
export interface GatewayContext {
  /** The gateway's settings (its id and version are core/config.ts's SERVICE_ID and VERSION; its data directory config.DATA_DIR). */
  config: Config;
  logger: Logger;
  inventory: readonly ServiceEntry[];
  registry: Registry;
  resolver: ToolResolver;
  dispatcher: Dispatcher;
  stats: GatewayStats;
  /** The call history and contexts store. */
  history: CallHistory;
  providers: Providers;
  /** Authorization (off unless AUTH_ISSUER or API_KEYS_FILE is set). */
  auth?: Authorizer;
  /** MCP tasks (2026-07-28 extension): the store beside the history, and the calls running as tasks here. */
  tasks: TaskManager;
  /** Subscriptions to resources of MCP servers behind the gateway, shared by the clients watching them. */
  watch: ResourceWatch;
  /** MCP_DISCOVERY=meta: the meta-tools clients see instead of the catalog (undefined: the whole catalog). */
  discovery?: Discovery;
  /** Virtual servers (/servers/{name}/mcp), set once they are read. */
  virtualServers?: VirtualServerReports;
  /** Set in a virtual server's view of this context (what its endpoint serves): the server's name. Undefined for /mcp. */
  virtualServer?: string;
  /** Live MCP sessions (set once the MCP endpoint exists). */
  mcpSessionCount: () => number;
}
