import { baseEnvShape, bool, csv, int, loadConfig, ms, optionalUrl, postgresUrl, type Env } from '@mcp-fleet/kit';
import { downstreamServices, resolveUrl, SERVICES, type ServiceEntry } from '@mcp-fleet/inventory';
import { z } from 'zod';
import { configuredMcpServers, inventoryStdioServers } from '../downstream/mcp-servers-config';
import type { DownstreamSpec } from './types';

export const SERVICE_ID = 'mega-orchestrator';
export const VERSION = '0.1.0';

export const configSchema = z.object({
  ...baseEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('40mb').describe(
    "Largest accepted request body (PAYLOAD_TOO_LARGE above it): as large as the largest a service of the fleet takes (transcriber-mcp's base64 audio), so that the gateway never refuses a call its service would accept (filesystem-mcp 8mb, media-mcp 16mb; the MCP SDK's servers 4mb).",
  ),
  HEALTH_POLL_MS: ms(5000, 50).describe("How often every downstream's /health and /tools/list are read."),
  FLEET_SERVICES: csv([]).describe(
    'Inventory services this gateway polls (ids, comma-separated); empty: every built one. `fleet up --only` sets it to the services it started, so the others show as not registered rather than unhealthy.',
  ),
  HEALTH_TIMEOUT_MS: ms(2000, 50, 60_000).describe('Time limit of one health or tools/list probe.'),
  DOWNSTREAM_TIMEOUT_MS: ms(30_000, 50, 600_000).describe('Time limit of one forwarded tool call (TIMEOUT 504 after it).'),
  DOWNSTREAM_PROGRESS_MAX_MS: ms(600_000, 50, 24 * 3_600_000).describe(
    'A call to an MCP server whose caller asked for progress (a progressToken) has its DOWNSTREAM_TIMEOUT_MS counted again from each progress report the server sends, up to this much in all (TIMEOUT after it).',
  ),
  DOWNSTREAM_CONNECTIONS: int(64, 1, 1024).describe('Keep-alive connections per downstream pool.'),
  DOWNSTREAM_CHANNEL: bool(true).describe(
    'Send plain tool calls to a kit service over its persistent channel (one upgraded connection of NDJSON frames) instead of one HTTP request each, where the service offers one; the rest (progress, health, lists) stays HTTP. false: every call is an HTTP request.',
  ),
  DOWNSTREAM_MAX_RESPONSE_BYTES: int(32 * 1024 * 1024, 1024, 512 * 1024 * 1024).describe(
    'Largest downstream answer the gateway reads (UPSTREAM_ERROR beyond it).',
  ),
  DOWNSTREAM_MAX_TOOLS: int(1000, 0, 100_000).describe(
    "Tools one downstream may list; the rest are refused and reported in GET /services (an mcpServers entry's limits.tools overrides it).",
  ),
  DOWNSTREAM_MAX_PROMPTS: int(1000, 0, 100_000).describe('Prompts one downstream may list (limits.prompts).'),
  DOWNSTREAM_MAX_RESOURCES: int(1000, 0, 100_000).describe(
    'Resources, and resource templates, one MCP server may list (limits.resources).',
  ),
  DOWNSTREAM_MAX_DESCRIPTION_BYTES: int(8 * 1024, 64, 1024 * 1024).describe(
    'Largest description (with its title) of one listed tool, prompt or resource; a larger one is refused (limits.descriptionBytes).',
  ),
  DOWNSTREAM_MAX_SCHEMA_BYTES: int(64 * 1024, 256, 16 * 1024 * 1024).describe(
    'Largest rest of one listed definition as JSON (input and output schemas, annotations, arguments); a larger one is refused (limits.schemaBytes).',
  ),
  BREAKER_FAILURES: int(5, 1, 1000).describe(
    "Consecutive failures that open a downstream's circuit breaker: connection errors, 5xx answers that are not the service's envelope, and time limits run out with nothing heard from the service meanwhile.",
  ),
  BREAKER_COOLDOWN_MS: ms(10_000, 10).describe('How long an open breaker refuses calls before one trial call is let through.'),
  MCP_PAGE_SIZE: int(0, 0, 100_000).describe(
    'MCP tools/list page size; 0 (the default) answers the whole catalog in one page, as several clients never follow nextCursor.',
  ),
  MCP_DISCOVERY: z
    .enum(['full', 'meta'], { error: () => 'MCP_DISCOVERY must be full or meta' })
    .default('full')
    .describe(
      'full (default): tools/list answers every tool. meta: it answers three meta-tools (search_tools, describe_tool, call_tool) that search the catalog by intent, show one schema and call a tool (docs/gateway.md).',
    ),
  DISCOVERY_EMBEDDINGS_URL: optionalUrl().describe(
    'OpenAI-compatible server base URL (POST {url}/v1/embeddings) for MCP_DISCOVERY=meta search; unset: the local embedder.',
  ),
  DISCOVERY_EMBEDDINGS_MODEL: z
    .string()
    .min(1)
    .max(200)
    .default('text-embedding-3-small')
    .describe('Model name sent to DISCOVERY_EMBEDDINGS_URL.'),
  DISCOVERY_EMBEDDINGS_API_KEY: z.string().optional().describe('API key for DISCOVERY_EMBEDDINGS_URL (never shown or logged).'),
  DISCOVERY_EMBEDDINGS_TIMEOUT_MS: ms(5000, 100, 120_000).describe('Time limit of one DISCOVERY_EMBEDDINGS_URL request.'),
  AUTH_ISSUER: optionalUrl().describe(
    'OAuth 2.1 authorization server (issuer URL): set, every route but /health, /metrics and the metadata needs a bearer token it issued (JWT, checked against its JWKS).',
  ),
  AUTH_JWKS_URL: optionalUrl().describe("The issuer's JWKS URL; default: jwks_uri from its /.well-known metadata."),
  AUTH_RESOURCE: optionalUrl().describe(
    "This gateway's resource identifier, the audience its tokens must carry (default http://127.0.0.1:<PORT>/mcp; set it to the public URL).",
  ),
  CONSOLE_OAUTH_CLIENT_ID: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, '1-200 visible ASCII characters')
    .optional()
    .describe(
      "The console's OAuth client at AUTH_ISSUER: set (with AUTH_ISSUER), the console's login page offers signing in there (authorization code with PKCE, the token checked as every bearer token is); register CONSOLE_OAUTH_REDIRECT_URI with it.",
    ),
  CONSOLE_OAUTH_CLIENT_SECRET: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe("The console client's secret, sent with client_secret_basic (never shown or logged); unset: a public client (PKCE alone)."),
  CONSOLE_OAUTH_SCOPES: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'scope tokens separated by single spaces')
    .max(2000)
    .default('tools:read')
    .describe(
      'The scopes the console asks for when a person signs in (space-separated; add admin for the access and logs pages, openid if the server wants it).',
    ),
  CONSOLE_OAUTH_REDIRECT_URI: optionalUrl().describe(
    "Where the authorization server sends the person back; default <origin of AUTH_RESOURCE>/console/api/oauth/callback (the gateway's public URL).",
  ),
  API_KEYS_FILE: z
    .string()
    .optional()
    .describe(
      'JSON file of API keys for machine clients: [{"name", "hash": "sha256:<hex>", "scopes": [...]}] (pnpm gateway-key makes one); set, auth is on.',
    ),
  AUDIT_LOG_FILE: z
    .string()
    .optional()
    .describe(
      "Audit log of every tool call (JSON lines: who, tool, service, outcome, duration; never arguments); default ${DATA_DIR}/gateway/audit.jsonl when auth is on, 'off' for none.",
    ),
  MCP_SERVERS_FILE: z
    .string()
    .optional()
    .describe(
      'JSON or YAML file of MCP servers to front, in the mcpServers shape ({"mcpServers": {"<id>": {"command", "args", "env", "cwd", "protocolVersion"?} or {"url", "headers", "protocolVersion"?}}}; protocolVersion "2026-07-28" or "2025-11-25" declares its era; undeclared, an HTTP server is asked server/discover first and spoken to in 2026-07-28 when it answers (a server of both eras included), a stdio one in 2025 unless it refuses initialize and answers server/discover); ${VAR} is expanded from the environment.',
    ),
  MCP_SERVERS: z.string().optional().describe('The same as MCP_SERVERS_FILE, inline as JSON; both may be used (ids must differ).'),
  VIRTUAL_SERVERS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'YAML or JSON file of virtual servers ({"servers": {"<name>": {"tools": [...]}}}, served at /servers/<name>/mcp); read again when it changes, a bad file refused naming its line; the admin API (/admin/servers) writes it. Default ${DATA_DIR}/gateway/virtual-servers.yaml.',
    ),
  STDIO_SERVERS: bool(true).describe(
    "Start the inventory's stdio MCP servers (toolkit-mcp-server) as downstreams of the gateway; false leaves them to MCP clients.",
  ),
  MCP_STDIO_SANDBOX: z
    .enum(['on', 'off'])
    .default('on')
    .describe(
      'Start stdio MCP servers inside the OS sandbox (bubblewrap; docs/gateway.md): on (default; a server is not started when no sandbox can be made, and /services says why) or off (every stdio server runs unsandboxed as the gateway\'s user: logged as a warning at start). One server opts out with "sandbox": false in its mcpServers entry.',
    ),
  MCP_RESTART_BACKOFF_MS: ms(1000, 10, 60_000).describe(
    'First restart delay of a stdio MCP server that died or failed to start; doubles per failure, up to 30 s.',
  ),
  MCP_SESSION_IDLE_MS: ms(30 * 60_000, 1000, 7 * 24 * 3_600_000).describe('MCP sessions idle longer than this are closed.'),
  MCP_MAX_SESSIONS: int(1000, 1, 100_000).describe(
    'At most this many live MCP sessions; beyond it, the owner holding the most closes its least recently used one.',
  ),
  MCP_MAX_SESSIONS_PER_OWNER: int(100, 1, 100_000).describe(
    "Live MCP sessions one principal (without authorization: one client address) may hold; beyond it that owner's least recently used one is closed, never another's.",
  ),
  MCP_SSE_RETRY_MS: ms(1000, 0, 3_600_000).describe(
    'The reconnection delay suggested (SSE retry) to 2025-11-25 clients on streams they can resume with Last-Event-ID.',
  ),
  MCP_SSE_EVENTS_PER_STREAM: int(1000, 1, 100_000).describe(
    "Events kept per stream of a session (its GET stream, each tool call's event stream) for a client that resumes it.",
  ),
  MCP_SSE_BYTES_PER_SESSION: int(2 * 1024 * 1024, 1024, 1024 * 1024 * 1024).describe(
    'Bytes of events kept per session for resuming streams; beyond it the least recently written streams are forgotten.',
  ),
  MCP_MAX_LISTEN_STREAMS: int(1000, 1, 100_000).describe(
    'At most this many open 2026-07-28 subscriptions/listen streams; one more is refused (HTTP 503, -32603).',
  ),
  MCP_LISTEN_KEEPALIVE_MS: ms(15_000, 50, 3_600_000).describe(
    'How often an idle subscriptions/listen stream gets an SSE comment line, so proxies and clients keep it open.',
  ),
  MCP_FORWARD_CLIENT_REQUESTS: bool(true).describe(
    "MCP servers behind the gateway may ask the caller of a tool call something (elicitation/create, sampling/createMessage, roots/list): put to a 2025-era session's client on the call's event stream, to a 2026-07-28 client as an input_required result. false: the gateway declares none of these client capabilities to its MCP servers.",
  ),
  MCP_FORWARD_UNLISTED: bool(true).describe(
    'A tool name no list shows goes to the only third-party MCP server behind the gateway (or the one a qualified name or POST /mcp/{id} names), and a URI no list shows may be watched there: the server answers for its own names as it would directly. Never a fleet tool name, a tool held by its pin, or a read. false: such names are UNKNOWN_TOOL and such URIs not found.',
  ),
  MCP_INPUT_TIMEOUT_MS: ms(300_000, 1000, 24 * 3_600_000).describe(
    "How long the caller of a tool call has to answer one such request (its call's own time limit stops meanwhile); then the MCP server gets a timeout error, and a 2026-07-28 requestState expires.",
  ),
  MCP_INSTANCE_URL: optionalUrl().describe(
    "This instance's MCP endpoint as the other gateway instances reach it (e.g. http://10.0.0.5:7000/mcp). Set on every instance (with one MCP_STATE_SECRET), a 2026-07-28 retry with requestState, or a tasks/update, that reaches the wrong instance is forwarded to the one holding the call; unset, that instance answers -32602 and the load balancer must route the retry back.",
  ),
  MCP_STATE_SECRET: z
    .string()
    .min(32)
    .optional()
    .describe(
      "Key (32 characters or more) signing the requestState of input_required results; the same on every instance, so that any instance checks another's requestState before forwarding it (MCP_INSTANCE_URL). Unset: a random key per process.",
    ),
  MCP_TASKS: bool(true).describe(
    'Serve the MCP tasks extension (io.modelcontextprotocol/tasks) to 2026-07-28 clients that declare it: calls of long-running tools answer a task handle; false: every call answers its result.',
  ),
  MCP_TASK_TOOLS: csv([]).describe(
    'Tools (plain or <service-id>__<tool> names) run as tasks for clients that declare the extension, beside those whose definition says execution.taskSupport "optional" or "required".',
  ),
  MCP_TASK_TTL_MS: ms(3_600_000, 2000, 7 * 24 * 3_600_000).describe(
    'How long a task and its result are kept from its creation (its ttlMs); tasks/get answers "expired" after it.',
  ),
  MCP_TASK_TIMEOUT_MS: ms(600_000, 1000, 24 * 3_600_000).describe(
    "Time limit of a task's downstream call (instead of DOWNSTREAM_TIMEOUT_MS); kept below MCP_TASK_TTL_MS.",
  ),
  MCP_TASK_MINT_MS: ms(100, 0, 60_000).describe(
    'How long a 2026-07-28 tools/call that may run as a task runs before its task is minted: one still running then, having asked its caller nothing, answers a task; one whose MCP server asks something first answers input_required with no task (the retry with the answers continues the call, and the window starts again); one that ends within it answers a task already completed (or failed). 0: the task is minted at once, and what the server asks goes to the task (tasks/update).',
  ),
  MCP_TASK_POLL_MS: ms(1000, 50, 60_000).describe('The pollIntervalMs suggested to clients polling tasks/get.'),
  MCP_MAX_TASKS: int(1000, 1, 1_000_000).describe(
    'Unexpired tasks stored at most (all gateway instances together); beyond it an optional-task tool answers synchronously and a task-required one -32603.',
  ),
  MCP_TASK_MAX_PER_CALLER: int(100, 0, 1_000_000).describe(
    "Unfinished (working) tasks one caller may hold: the token's principal when authorization is on, else every caller together; beyond it a task tool answers -32603 saying to wait or cancel. 0: no per-caller cap.",
  ),
  MCP_TASK_MAX_RESULT_BYTES: int(4 * 1024 * 1024, 1024, 64 * 1024 * 1024).describe(
    'Largest task result stored; a larger one fails the task (-32603) saying so.',
  ),
  MCP_TASK_LEASE_MS: ms(30_000, 100, 3_600_000).describe(
    'A running task is renewed by its gateway instance every third of this; one not renewed for this long (its instance died) reads failed.',
  ),
  SESSION_DB: z.string().min(1).optional().describe('Session/context store; defaults to ${DATA_DIR}/gateway/contexts.sqlite.'),
  SESSION_DATABASE_URL: postgresUrl().describe(
    'PostgreSQL for the call history and contexts, shared by several gateway instances; unset: SQLite at SESSION_DB.',
  ),
  REDIS_URL: optionalUrl(/^rediss?$/).describe(
    'Redis shared by several gateway instances for what is counted across requests (rate limits); unset: counted in this process.',
  ),
  RATE_LIMIT_PER_MINUTE: int(0, 0, 10_000_000).describe(
    "POST requests (tool calls and every other MCP message) one caller may send per minute: the token's subject when authorization is on, else the client address; above it RATE_LIMITED (429, Retry-After). 0: no limit.",
  ),
  RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, '1-64 letters, digits, _ . : or -')
    .default('mcp-fleet:ratelimit')
    .describe('Prefix of the rate-limit keys in Redis (instances sharing a limit use the same one).'),
  RATE_LIMIT_REDIS_TIMEOUT_MS: ms(250, 10, 10_000).describe(
    'How long a rate-limit count may wait for Redis; past it the request goes through uncounted (a stalled Redis must not stall the gateway).',
  ),
  TRUST_PROXY: z
    .string()
    .optional()
    .describe(
      "Express 'trust proxy' (e.g. loopback, 10.0.0.0/8, or a hop count): behind a load balancer, the client address for rate limits is read from X-Forwarded-For. Unset: the socket's address.",
    ),
  SESSION_MAX_CALLS: int(200, 1, 100_000).describe('Calls kept per session (older ones are deleted).'),
  SESSION_FLUSH_MS: ms(250, 10, 60_000).describe('Queued session records are written at most this long after the call.'),
  SESSION_RETENTION_HOURS: int(168, 1, 24 * 365).describe('Sessions unused for longer than this are deleted.'),
  PROVIDER_PROBE_TTL_MS: ms(60_000, 0).describe('/providers caches its reachability probes this long.'),
  PROVIDER_PROBE_TIMEOUT_MS: ms(2000, 50, 60_000).describe('Time limit of one /providers reachability probe.'),
  LLM_BASE_URL: optionalUrl().describe('OpenAI-compatible chat endpoint base URL shown (and probed) by /providers; unset: not configured.'),
  LLM_API_KEY: z.string().optional().describe('API key for LLM_BASE_URL (never shown or logged).'),
  EMBEDDINGS_URL: optionalUrl().describe(
    'OpenAI-compatible /v1/embeddings endpoint shown (and probed) by /providers; unset: the local embedder.',
  ),
  EMBEDDINGS_API_KEY: z.string().optional().describe('API key for the embeddings endpoint (never shown or logged).'),
  STT_URL: optionalUrl().describe('OpenAI-compatible speech-to-text endpoint shown by /providers; unset: the embedded recognizer.'),
  RESEARCH_SOURCES: csv([]).describe('Research sources: names (wikipedia, arxiv, ...) or base URLs.'),
  SMTP_URL: optionalUrl(/^smtps?$/).describe('SMTP server mail-mcp sends through, shown by /providers (credentials never shown).'),
  IMAP_URL: optionalUrl(/^imaps?$/).describe('IMAP server mail-mcp reads, shown by /providers (credentials never shown).'),
  MARKETPLACE_URL: optionalUrl().describe('Where /providers finds the marketplace (default: marketplace-mcp on its documented port).'),
  MARKETPLACE_JWT_TOKEN: z
    .string()
    .optional()
    .describe('Bearer token the gateway sends when it calls the marketplace (market:read); never logged.'),
  PATH: z.string().optional().describe('Directories searched for ffmpeg and pocketsphinx (the local speech-to-text backend).'),
});

export type Config = z.output<typeof configSchema> & {
  /** The downstream registry; built from the inventory and the MCP server configuration by readConfig. */
  downstreams?: DownstreamSpec[];
  /** Inventory stdio servers left out, with the reason (logged at start). */
  skippedServers?: string[];
};

/** Per service, the variable holding a bearer token the gateway sends it (the marketplace needs one when JWT_SECRET is set there). */
export const DOWNSTREAM_TOKEN_VARIABLES: Readonly<Record<string, string>> = { 'marketplace-mcp': 'MARKETPLACE_JWT_TOKEN' };

/** The registry the gateway polls: the inventory's built HTTP services, at `<ID>_URL` / `<ID>_PORT`. */
export function defaultDownstreams(env: Env, entries: readonly ServiceEntry[] = downstreamServices()): DownstreamSpec[] {
  return entries.map((entry) => {
    const token = env[DOWNSTREAM_TOKEN_VARIABLES[entry.id] ?? '']?.trim();
    return {
      id: entry.id,
      url: resolveUrl(entry, env),
      tools: [...entry.tools],
      ...(entry.primaryFor ? { primaryFor: [...entry.primaryFor] } : {}),
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    };
  });
}

export function readConfig(env?: Env): Config {
  const source = env ?? process.env;
  const config: Config = loadConfig(SERVICE_ID, configSchema, source);
  const stdio = config.STDIO_SERVERS ? inventoryStdioServers(source) : { specs: [], skipped: [] };
  config.downstreams = [
    ...defaultDownstreams(source, polledServices(config.FLEET_SERVICES)),
    ...stdio.specs,
    ...configuredMcpServers(source),
  ];
  config.skippedServers = stdio.skipped;
  return config;
}

/** The built HTTP services named by FLEET_SERVICES (all of them when it is empty); an unknown id is refused, naming the known ones. */
export function polledServices(ids: readonly string[]): ServiceEntry[] {
  const built = downstreamServices();
  if (ids.length === 0) return built;
  const unknown = ids.filter((id) => !built.some((e) => e.id === id));
  if (unknown.length)
    throw new Error(
      `FLEET_SERVICES names ${unknown.join(', ')}, which this gateway does not know; built services: ${built.map((e) => e.id).join(', ')}`,
    );
  return built.filter((e) => ids.includes(e.id));
}

/** The whole inventory, for GET /services (planned and excluded services are listed too). */
export const INVENTORY: readonly ServiceEntry[] = SERVICES;
