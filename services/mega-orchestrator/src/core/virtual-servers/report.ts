/** What the rest of the gateway reads of virtual servers (GET /services): a leaf, so that context.ts imports no cycle. */

/** A defined tool a virtual server does not list now, and why. */
export interface HiddenTool {
  /** The name its clients would call. */
  name: string;
  /** The backing tool. */
  tool: string;
  reason: string;
}

/** A server as /services and the admin API show it. */
export interface ServerReport {
  name: string;
  endpoint: string;
  description?: string;
  /** The names its clients see now. */
  tools: string[];
  /** Defined tools not listed now, and why. */
  hidden: HiddenTool[];
}

export interface VirtualServerReports {
  report(): ServerReport[];
}
