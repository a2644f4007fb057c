/**
 * The one source of truth for the fleet (decisions.md, "Inventory"): every service of the contract,
 * its port, access pattern, tools and backends. The gateway registry, the fleet launcher, compose
 * files and Prometheus targets derive from this list, and tests prove they agree.
 */
/**
 * `coordinator`: the alternate coordinator surface (port 8020), which calls the gateway; the launcher
 * and compose run it, the gateway does not poll it (its tools are other services' tools).
 */
export type AccessPattern =
  'gateway' | 'coordinator' | 'route-oriented' | 'tool-oriented' | 'json-rpc' | 'stdio' | 'rest-mcp' | 'rest-ui' | 'scaffold';

export type Backend =
  | 'sqlite'
  | 'postgres'
  | 'redis'
  | 'qdrant'
  | 'mqtt'
  | 'smtp'
  | 'imap'
  | 'vault'
  | 'embeddings'
  | 'speech'
  | 'filesystem'
  | 'git'
  | 'process'
  | 'http';

export interface ServiceEntry {
  id: string;
  port: number;
  pattern: AccessPattern;
  description: string;
  tools: string[];
  backends: Backend[];
  /** Built in this repository and started by the launcher; planned ones are listed as not yet available. */
  status: 'available' | 'planned' | 'excluded';
  /** Where a tool name is offered by several services, this service owns the plain name for these. */
  primaryFor?: string[];
  /** Services that talk only JSON-RPC or stdio are not polled over /tools/list. */
  http: boolean;
  /** The README's backends column: embedded default / real engine (rendered by `pnpm gen`). */
  storage?: string;
  /** Further ports the service listens on, by the variable that sets each (moved by FLEET_PORT_OFFSET too). */
  extraPorts?: Record<string, number>;
  /**
   * On the agents' hot path (called by nearly every session, busy rather than idle): started with
   * the Node flags for speed (HOT_PATH_NODE_ARGS) instead of the idle tool services' ones.
   */
  hotPath?: boolean;
}

export const SERVICES: readonly ServiceEntry[] = [
  {
    id: 'mega-orchestrator',
    port: 7000,
    pattern: 'gateway',
    description: 'The gateway: one catalog, one dispatch entry point, MCP over Streamable HTTP.',
    tools: [],
    backends: ['sqlite'],
    status: 'available',
    http: true,
    storage: 'SQLite session store',
  },
  {
    id: 'filesystem-mcp',
    port: 7001,
    pattern: 'route-oriented',
    description: 'Read, write, list, search and analyse files inside the workspace roots.',
    tools: ['file_read', 'file_write', 'file_list', 'file_search', 'file_analyze'],
    backends: ['filesystem'],
    status: 'available',
    http: true,
    storage: 'workspace roots',
    hotPath: true,
  },
  {
    id: 'git-mcp',
    port: 7002,
    pattern: 'route-oriented',
    description: 'Git status, log, diff, commit and push for repositories inside the workspace roots.',
    tools: ['git_status', 'git_log', 'git_diff', 'git_commit', 'git_push'],
    backends: ['git'],
    status: 'available',
    http: true,
    storage: 'git',
  },
  {
    id: 'terminal-mcp',
    port: 7003,
    pattern: 'route-oriented',
    description: 'Run allowlisted commands with time and output caps; inspect directories and processes.',
    tools: ['execute_command', 'directory', 'processes', 'system_info'],
    backends: ['process'],
    status: 'available',
    http: true,
    storage: 'child processes',
  },
  {
    id: 'database-mcp',
    port: 7004,
    pattern: 'route-oriented',
    description: 'SQL over named connections: an embedded SQLite sandbox and configured PostgreSQL databases.',
    tools: ['db_query', 'db_tables', 'db_schema', 'db_sample'],
    backends: ['sqlite', 'postgres'],
    status: 'available',
    http: true,
    storage: 'SQLite sandbox / PostgreSQL (`DATABASES`, `DATABASE_URL`)',
  },
  {
    id: 'memory-mcp',
    port: 7005,
    pattern: 'route-oriented',
    description: 'Store, list, search and delete memories with ranked full-text search.',
    tools: ['store_memory', 'list_memories', 'search_memories', 'delete_memory', 'memory_stats'],
    backends: ['sqlite', 'postgres'],
    status: 'available',
    primaryFor: ['store_memory', 'search_memories'],
    http: true,
    storage: 'SQLite FTS5 / PostgreSQL full text',
  },
  {
    id: 'network-mcp',
    port: 7006,
    pattern: 'tool-oriented',
    description: 'Outbound HTTP, signed webhooks, DNS lookups and API probes, refusing private addresses by default.',
    tools: ['http_request', 'webhook_create', 'webhook_list', 'webhook_logs', 'webhook_delete', 'dns_lookup', 'api_test'],
    backends: ['http', 'sqlite'],
    status: 'available',
    http: true,
    storage: 'outbound HTTP with an address policy',
  },
  {
    id: 'system-mcp',
    port: 7007,
    pattern: 'tool-oriented',
    description: 'Host resources, processes, disks and system information.',
    tools: ['resource_monitor', 'process_list', 'disk_usage', 'system_info'],
    backends: ['process'],
    status: 'available',
    primaryFor: ['system_info'],
    http: true,
    storage: 'the host',
  },
  {
    id: 'security-mcp',
    port: 7008,
    pattern: 'tool-oriented',
    description: 'JWT minting and verification, bcrypt password hashing, AES-256-GCM encryption, TLS certificate checks.',
    tools: ['jwt_token', 'jwt_verify', 'password_hash', 'password_verify', 'encrypt', 'decrypt', 'ssl_check'],
    backends: ['http'],
    status: 'available',
    http: true,
    storage: 'jose, bcrypt, AES-256-GCM',
  },
  {
    id: 'config-mcp',
    port: 7009,
    pattern: 'tool-oriented',
    description:
      'Inspect environment variables with redaction, read and convert config files, validate against JSON Schema, back up configs.',
    tools: ['env_vars', 'config_file', 'validate', 'backup'],
    backends: ['filesystem'],
    status: 'available',
    http: true,
    storage: 'workspace roots',
  },
  {
    id: 'log-mcp',
    port: 7010,
    pattern: 'tool-oriented',
    description: 'Search and analyse log files, including the fleet’s own logs.',
    tools: ['log_search', 'log_analysis'],
    backends: ['filesystem'],
    status: 'available',
    http: true,
    storage: "`LOG_ROOTS` (the fleet's own logs by default)",
  },
  {
    id: 'research-mcp',
    port: 7011,
    pattern: 'route-oriented',
    description: 'News, domain, academic and generic research.',
    tools: ['research_query', 'research_news', 'research_academic', 'research_domain', 'research_structured'],
    backends: ['http'],
    status: 'available',
    http: true,
    storage: 'in-memory TTL cache / public APIs, SearxNG, chat model',
  },
  {
    id: 'advanced-memory-mcp',
    port: 7012,
    pattern: 'tool-oriented',
    description: 'Vectorised memories: semantic similarity, vector search and context bundles.',
    tools: ['store_memory', 'search_memories', 'semantic_similarity', 'vector_search', 'get_context'],
    backends: ['sqlite', 'qdrant', 'embeddings'],
    status: 'available',
    http: true,
    storage: 'embedded vectors / Qdrant; local embedder / OpenAI-compatible',
  },
  {
    id: 'transcriber-mcp',
    port: 7013,
    pattern: 'route-oriented',
    description: 'Speech to text for uploaded audio and media URLs.',
    tools: ['transcribe_audio', 'transcribe_url'],
    backends: ['speech', 'http'],
    status: 'available',
    http: true,
    storage: 'none (scratch files under DATA_DIR only); ffmpeg + pocketsphinx / OpenAI-compatible (`STT_URL`)',
  },
  {
    id: 'vision-mcp',
    port: 7014,
    pattern: 'scaffold',
    description: 'Reserved scaffold; no public contract of its own.',
    tools: [],
    backends: [],
    status: 'excluded',
    http: false,
  },
  {
    id: 'mail-mcp',
    port: 7015,
    pattern: 'route-oriented',
    description: 'Search, read, send, forward, label and move mail.',
    tools: [
      'mail_search',
      'mail_send',
      'mail_forward',
      'mail_get',
      'mail_count',
      'mail_labels',
      'mail_label_create',
      'mail_label_apply',
      'mail_move',
    ],
    backends: ['smtp', 'imap'],
    status: 'available',
    http: true,
    storage: 'none (NOT_CONFIGURED until set) / IMAP (`IMAP_URL`) + SMTP (`SMTP_URL`)',
  },
  {
    id: 'media-mcp',
    port: 7016,
    pattern: 'tool-oriented',
    description: 'Analyse, process and query media.',
    tools: ['media_analyze', 'media_process', 'media_query'],
    backends: ['process', 'sqlite', 'filesystem'],
    status: 'available',
    http: true,
    storage: 'SQLite job records; sharp (npm) and the system ffmpeg',
  },
  {
    id: 'toolkit-mcp-server',
    port: 7017,
    pattern: 'stdio',
    description: 'Stdio MCP server with reasoning and code tools; no HTTP surface.',
    tools: ['thinkdeep', 'codereview', 'debug', 'analyze', 'chat', 'precommit', 'testgen', 'refactor', 'tracer', 'fileretrieve'],
    backends: [],
    status: 'available',
    storage: 'none (stdio; reads WORKSPACE_ROOTS)',
    http: false,
  },
  {
    id: 'mqtt-mcp',
    port: 7019,
    pattern: 'json-rpc',
    description: 'Publish, subscribe and read buffered MQTT messages.',
    tools: ['publish_message', 'subscribe_topic', 'unsubscribe_topic', 'get_mqtt_status', 'list_messages'],
    backends: ['mqtt'],
    status: 'available',
    storage: 'embedded aedes broker + SQLite subscriptions / MQTT broker (Mosquitto)',
    http: true,
    extraPorts: { MQTT_EMBEDDED_PORT: 7119 },
  },
  {
    id: 'code-graph-mcp',
    port: 7020,
    pattern: 'tool-oriented',
    description: 'Index Python projects and query their code graph.',
    tools: ['index_python_project', 'query_code_graph', 'find_dependencies', 'find_callers', 'detect_circular_imports'],
    backends: ['filesystem'],
    status: 'available',
    storage: 'SQLite under DATA_DIR',
    http: true,
  },
  {
    id: 'sql-mcp-wrapper',
    port: 7024,
    pattern: 'tool-oriented',
    description: 'Structured read-only queries, schema and connection statistics.',
    tools: ['query', 'schema', 'connection'],
    backends: ['postgres', 'sqlite'],
    status: 'available',
    http: true,
    storage: 'SQLite sandbox (read-only) / PostgreSQL',
  },
  {
    id: 'cache-mcp-wrapper',
    port: 7025,
    pattern: 'tool-oriented',
    description: 'Key-value cache and sessions with TTLs.',
    tools: ['cache', 'session'],
    backends: ['redis'],
    status: 'available',
    http: true,
    storage: 'in-process / Redis (`REDIS_URL`)',
  },
  {
    id: 'vector-mcp-wrapper',
    port: 7026,
    pattern: 'tool-oriented',
    description: 'Vector collections, points and similarity search.',
    tools: ['collection', 'vector', 'search'],
    backends: ['sqlite', 'qdrant'],
    status: 'available',
    http: true,
    storage: 'embedded / Qdrant (`QDRANT_URL`)',
  },
  {
    id: 'marketplace-mcp',
    port: 7034,
    pattern: 'rest-mcp',
    description: 'Private skill catalog, MCP sub-registry and install plans.',
    tools: ['skills_list', 'skills_resolve', 'registry_search', 'registry_get_server', 'catalog_validate'],
    backends: ['filesystem'],
    status: 'available',
    http: true,
  },
  {
    id: 'coordinator',
    port: 8020,
    pattern: 'coordinator',
    description:
      'The alternate coordinator surface: POST /mcp {tool, arguments} for the contract tools, through the gateway, rate-limited per client IP.',
    tools: [
      'file_read',
      'file_write',
      'file_list',
      'git_status',
      'git_log',
      'git_diff',
      'execute_command',
      'system_info',
      'db_query',
      'db_schema',
      'store_memory',
      'search_memories',
      'list_memories',
      'memory_stats',
      'transcribe_audio',
      'transcribe_url',
      'research_query',
    ],
    backends: ['redis'],
    status: 'available',
    http: true,
    storage: 'rate-limit counts in process / Redis (`REDIS_URL`)',
  },
  {
    id: 'secrets-ui',
    port: 10000,
    pattern: 'rest-ui',
    description: 'Inspect and update runtime secrets.',
    tools: [],
    backends: ['vault'],
    status: 'available',
    http: true,
    storage: 'encrypted file store / HashiCorp Vault KV v2 (`VAULT_ADDR`)',
  },
];

export const GATEWAY_ID = 'mega-orchestrator';

/**
 * The ports of the earlier reference (platform-interface.md, "Alternate coordinator surface"), served by
 * the launcher's reference profile (`fleet up --profile reference`) for old clients: its tool services
 * on 8001-8005, advanced memory on 8006, the vector database on 8007, the transcriber on 8008 and
 * research on 8011. Services not listed keep their own ports.
 */
export const REFERENCE_PORTS: Readonly<Record<string, number>> = {
  'filesystem-mcp': 8001,
  'git-mcp': 8002,
  'terminal-mcp': 8003,
  'database-mcp': 8004,
  'memory-mcp': 8005,
  'advanced-memory-mcp': 8006,
  'vector-mcp-wrapper': 8007,
  'transcriber-mcp': 8008,
  'research-mcp': 8011,
};

export const FLEET_PROFILES = ['default', 'reference'] as const;
export type FleetProfile = (typeof FLEET_PROFILES)[number];

/** A service's port before any offset under a profile: the reference port where the profile has one. */
export function profilePort(entry: ServiceEntry, profile: FleetProfile): number {
  return profile === 'reference' ? (REFERENCE_PORTS[entry.id] ?? entry.port) : entry.port;
}

export function getService(id: string): ServiceEntry | undefined {
  return SERVICES.find((s) => s.id === id);
}

/** "filesystem-mcp" -> "FILESYSTEM_MCP" */
export function envPrefix(id: string): string {
  return id.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

export type Env = Record<string, string | undefined>;

/** A service's port: `<ID>_PORT` overrides the documented one. */
export function resolvePort(entry: ServiceEntry, env: Env): number {
  const raw = env[`${envPrefix(entry.id)}_PORT`];
  if (raw === undefined || raw === '') return entry.port;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${envPrefix(entry.id)}_PORT must be a port number, got "${raw}"`);
  return n;
}

/** Where the gateway finds a service: `<ID>_URL`, else http://127.0.0.1:<port>. */
export function resolveUrl(entry: ServiceEntry, env: Env): string {
  const explicit = env[`${envPrefix(entry.id)}_URL`];
  if (explicit) return explicit.replace(/\/+$/, '');
  return `http://127.0.0.1:${resolvePort(entry, env)}`;
}

/** Whether the gateway routes to the service: every one but the gateway itself and the coordinator surface (which calls the gateway). */
export function polledByGateway(entry: ServiceEntry): boolean {
  return entry.pattern !== 'gateway' && entry.pattern !== 'coordinator';
}

/** The services the launcher starts besides the gateway: built, HTTP (the coordinator surface too). */
export function launchedServices(): ServiceEntry[] {
  return SERVICES.filter((s) => s.status === 'available' && s.http && s.pattern !== 'gateway');
}

/** The services the gateway polls and routes to: the launched ones but the coordinator surface. */
export function downstreamServices(): ServiceEntry[] {
  return launchedServices().filter(polledByGateway);
}

/** Tool names offered by more than one service the gateway routes to, with their primary owner. */
export function collisions(
  entries: readonly ServiceEntry[] = SERVICES.filter(polledByGateway),
): Map<string, { primary: string; owners: string[] }> {
  const owners = new Map<string, string[]>();
  for (const s of entries) for (const t of s.tools) owners.set(t, [...(owners.get(t) ?? []), s.id]);
  const out = new Map<string, { primary: string; owners: string[] }>();
  for (const [tool, ids] of owners) {
    if (ids.length < 2) continue;
    const primary = entries.find((s) => s.primaryFor?.includes(tool))?.id ?? ids[0];
    out.set(tool, { primary, owners: ids });
  }
  return out;
}
