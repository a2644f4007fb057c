/**
 * How an MCP server behind the gateway is declared (an mcpServers entry, ../mcp-servers-config.ts):
 * the downstream side's own types, which core/types.ts and core/pins.ts re-export.
 */
/** How to reach a real MCP server (mcp-downstream.ts speaks to it): a stdio child, Streamable HTTP, or the older HTTP+SSE. */
export interface StdioServerSpec {
  transport: 'stdio';
  command: string;
  args: string[];
  cwd?: string;
  /** Added to the SDK's safe default environment (PATH, HOME, ...); the gateway's own secrets are not passed. */
  env: Record<string, string>;
  /**
   * Its era, when declared: 2026-07-28 (the stateless revision) is spoken to with the v2 client
   * (client-2026-07-28.ts), 2025-11-25 with initialize only; undeclared, it is asked server/discover
   * first (a stdio one within 10 s, on a short-lived sibling process), then initialize.
   */
  protocolVersion?: '2025-11-25' | '2026-07-28';
  /** Its OS sandbox (../stdio-sandbox.ts): default sandboxed with the network; false runs it unsandboxed. */
  sandbox?: false | StdioSandboxPolicy;
}

/** What a sandboxed stdio server may reach besides the system's directories and its own home. */
export interface StdioSandboxPolicy {
  /** Share the host's network (default true: most servers call an API or download their package). */
  network?: boolean;
  /** Directories (or files) mounted read-only at the same path. */
  readOnly?: string[];
  /** Directories (or files) mounted read-write at the same path, e.g. a filesystem server's roots. */
  writable?: string[];
}

export interface HttpServerSpec {
  transport: 'streamable-http';
  url: string;
  headers: Record<string, string>;
  /**
   * Its era, when declared: 2026-07-28 (the stateless revision) is spoken to with the v2 client
   * (client-2026-07-28.ts), 2025-11-25 with initialize only; undeclared, it is asked server/discover
   * first (a stdio one within 10 s, on a short-lived sibling process), then initialize.
   */
  protocolVersion?: '2025-11-25' | '2026-07-28';
}

/**
 * A server of the older HTTP+SSE transport (MCP 2024-11-05: a GET event stream that names the URL
 * to POST messages to), which many servers still offer alone. Spoken to with the 2025-era client
 * (initialize negotiates the revision); never asked server/discover.
 */
export interface SseServerSpec {
  transport: 'sse';
  url: string;
  headers: Record<string, string>;
  protocolVersion?: undefined;
}

export type McpServerSpec = StdioServerSpec | HttpServerSpec | SseServerSpec;

/** What a change of a pinned tool definition does at a server (core/pins.ts): nothing, served and reported, or held back. */
export const PIN_MODES = ['off', 'notify', 'hold'] as const;
export type PinMode = (typeof PIN_MODES)[number];

/** An mcpServers entry as the registry takes it (core/types.ts's DownstreamSpec, as far as an entry fills it in). */
export interface McpServerEntry {
  id: string;
  /** For display only: its declared URL template, or `stdio:<id>`. */
  url: string;
  mcp: McpServerSpec;
  tools?: string[];
  primaryFor?: string[];
  pin?: PinMode;
  /** Caps on what it lists (core/list-limits.ts's ListLimits, each optional). */
  limits?: Partial<Record<'tools' | 'prompts' | 'resources' | 'descriptionBytes' | 'schemaBytes', number>>;
  /** Values `${VAR}` put into its URL, headers, environment or arguments. */
  secrets?: string[];
  /** Its own time limit of one call (instead of DOWNSTREAM_TIMEOUT_MS). */
  timeoutMs?: number;
}
