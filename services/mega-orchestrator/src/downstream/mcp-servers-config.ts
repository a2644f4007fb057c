/**
 * MCP servers the gateway fronts besides the fleet's own services: declared in a JSON or YAML file
 * (`MCP_SERVERS_FILE`) and/or inline JSON (`MCP_SERVERS`), in the `mcpServers` shape MCP clients
 * already use, plus the inventory's own stdio servers (toolkit-mcp-server) unless turned off.
 *
 *   { "mcpServers": {
 *       "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": { "MEMORY_FILE_PATH": "/data/m.json" } },
 *       "remote": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer ${REMOTE_TOKEN}" } } } }
 *
 * `${NAME}` in env values, headers and the URL is taken from the gateway's environment, so secrets
 * stay out of the file. A stdio child gets the SDK's safe default environment (PATH, HOME, ...) plus
 * its `env`, never the gateway's own variables.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, isPlainObject, SERVICE_NODE_ARGS, type Env } from '@mcp-fleet/kit';
import { SERVICES, type ServiceEntry } from '@mcp-fleet/inventory';
import YAML from 'yaml';
import { z } from 'zod';
import { PIN_MODES, type McpServerEntry } from './mcp/spec';
import { literalSecrets, maskSecrets, shownUrl, VARIABLE } from './secret-mask';

const SERVICE_ID = 'mega-orchestrator';
export const MCP_SERVER_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;
const TOOL = /^[a-zA-Z0-9_-]{1,64}$/;

const common = {
  tools: z
    .array(z.string().regex(TOOL))
    .max(1000)
    .optional()
    .describe('Tools it is expected to offer (calls while it is down are UPSTREAM_UNAVAILABLE).'),
  primaryFor: z.array(z.string().regex(TOOL)).max(1000).optional().describe('Colliding tool names this server owns plainly.'),
  disabled: z.boolean().optional().describe('Listed but not started.'),
  timeoutMs: z
    .number()
    .int()
    .min(50)
    .max(24 * 3_600_000)
    .optional()
    .describe(
      "Time limit of one call to this server's tools, prompts or resources, instead of DOWNSTREAM_TIMEOUT_MS (a slow server's own).",
    ),
  pin: z
    .enum(PIN_MODES)
    .optional()
    .describe(
      'What a change of a tool definition seen before does: hold (default) withholds the tool until approved, notify serves and reports it, off.',
    ),
  limits: z
    .object({
      tools: z.number().int().min(0).max(100_000).optional(),
      prompts: z.number().int().min(0).max(100_000).optional(),
      resources: z.number().int().min(0).max(100_000).optional(),
      descriptionBytes: z
        .number()
        .int()
        .min(64)
        .max(1024 * 1024)
        .optional(),
      schemaBytes: z
        .number()
        .int()
        .min(256)
        .max(16 * 1024 * 1024)
        .optional(),
    })
    .strict()
    .optional()
    .describe('Caps on what it lists, instead of the DOWNSTREAM_MAX_* defaults.'),
};

const stdioServer = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1).describe('Program to start (looked up on PATH).'),
    args: z.array(z.string()).max(200).default([]),
    cwd: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).default({}),
    /** "2026-07-28": a server of the stateless revision (no initialize); default: the 2025-era session handshake. */
    protocolVersion: z.enum(['2025-11-25', '2026-07-28']).optional(),
    sandbox: z
      .union([
        z.literal(false),
        z
          .object({
            network: z.boolean().optional(),
            readOnly: z.array(z.string().min(1)).max(100).optional(),
            writable: z.array(z.string().min(1)).max(100).optional(),
          })
          .strict(),
      ])
      .optional()
      .describe(
        "Its OS sandbox (default: sandboxed, with the network, its own home under DATA_DIR, its cwd read-only): false runs it unsandboxed; readOnly / writable name the further paths it may see (a filesystem server's roots).",
      ),
    ...common,
  })
  .strict();

const httpServer = z
  .object({
    /** "sse": the older HTTP+SSE transport (MCP 2024-11-05); otherwise Streamable HTTP. */
    type: z.enum(['streamable-http', 'http', 'sse']).optional(),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).default({}),
    /** "2026-07-28": a server of the stateless revision (no initialize); default: the 2025-era session handshake. */
    protocolVersion: z.enum(['2025-11-25', '2026-07-28']).optional(),
    ...common,
  })
  .strict();

const serverEntry = z.union([stdioServer, httpServer]);
const fileShape = z.union([z.object({ mcpServers: z.record(z.string(), z.unknown()) }).strict(), z.record(z.string(), z.unknown())]);

interface Problem {
  variable: string;
  message: string;
}

/**
 * `${NAME}` from the gateway's environment; an unset one is a configuration error, not an empty
 * string. The values put in are added to `secrets`: never shown (secret-mask.ts).
 */
function expand(value: string, env: Env, where: string, problems: Problem[], secrets: string[]): string {
  return value.replace(VARIABLE, (_, name: string) => {
    const v = env[name];
    if (v === undefined) problems.push({ variable: where, message: `\${${name}} is not set in the gateway's environment` });
    else secrets.push(v);
    return v ?? '';
  });
}

function parseDocument(text: string, variable: string, problems: Problem[]): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    problems.push({ variable, message: `is neither JSON nor YAML: ${(err as Error).message.split('\n')[0]}` });
    return {};
  }
  if (doc === null || doc === undefined) return {};
  const shape = fileShape.safeParse(doc);
  if (!shape.success) {
    problems.push({ variable, message: 'must be an object: { "mcpServers": { "<id>": { "command": ... } | { "url": ... } } }' });
    return {};
  }
  if ('mcpServers' in shape.data && typeof shape.data.mcpServers === 'object') return shape.data.mcpServers as Record<string, unknown>;
  // VS Code's mcp.json: { "servers": { ... }, "inputs": [...] } (its inputs are prompts the gateway cannot ask)
  const { servers } = shape.data as { servers?: unknown };
  if (isPlainObject(servers) && !ENTRY_KEYS.some((k) => k in servers)) return servers;
  return shape.data;
}

/** Keys that make an object a server's entry (not a map of entries). */
const ENTRY_KEYS = ['command', 'url', 'serverUrl', 'httpUrl'];
/** Keys other MCP clients keep in an entry for themselves (tool approvals, notes, trust prompts): accepted and not used. */
const CLIENT_ONLY_KEYS = ['autoApprove', 'alwaysAllow', 'trust', 'description', 'timeout'];
/** Other clients' names of the transports. */
const TYPE_ALIASES: Record<string, string> = {
  streamableHttp: 'streamable-http',
  streamable_http: 'streamable-http',
  'streamable-http': 'streamable-http',
  http: 'http',
  sse: 'sse',
  stdio: 'stdio',
};

/**
 * An entry as other MCP clients write it, in this file's terms: Windsurf's `serverUrl` and Gemini
 * CLI's `httpUrl` are `url` (Streamable HTTP); Cline's `transportType` and `"type": "streamableHttp"`
 * name the transport; VS Code's `${env:NAME}` is `${NAME}` (VARIABLE); the keys clients keep for
 * themselves (CLIENT_ONLY_KEYS) are dropped; a number or boolean in `args`, `env` or `headers` is its
 * text. A VS Code `${input:...}` (a prompt it asks its user) is named as a problem: the gateway asks nobody.
 */
function fromOtherClients(raw: unknown, where: string, problems: Problem[]): unknown {
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (!CLIENT_ONLY_KEYS.includes(key)) out[key] = value;
  for (const alias of ['serverUrl', 'httpUrl']) {
    if (!(alias in out)) continue;
    if (!('url' in out)) {
      out.url = out[alias];
      if (alias === 'httpUrl' && !('type' in out)) out.type = 'streamable-http';
    }
    delete out[alias];
  }
  if ('transportType' in out) {
    if (!('type' in out)) out.type = out.transportType;
    delete out.transportType;
  }
  if (typeof out.type === 'string' && out.type in TYPE_ALIASES) out.type = TYPE_ALIASES[out.type];
  // numbers and booleans where a string belongs ("PORT": 8080, "--port", 8080), as a process gets them
  const scalar = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v);
  if (Array.isArray(out.args)) out.args = out.args.map(scalar);
  for (const key of ['env', 'headers'])
    if (isPlainObject(out[key]))
      out[key] = Object.fromEntries(Object.entries(out[key] as Record<string, unknown>).map(([k, v]) => [k, scalar(v)]));
  const input = /\$\{input:([^}]*)\}/.exec(JSON.stringify(out));
  if (input)
    problems.push({
      variable: where,
      message: `\${input:${input[1]}} is a prompt of VS Code's; the gateway asks nobody: put the value in its environment and write \${NAME}`,
    });
  return out;
}

/**
 * The configured MCP servers as downstream specs. Throws ConfigError naming every bad entry, as the
 * rest of the configuration does.
 */
export function configuredMcpServers(env: Env, inventory: readonly ServiceEntry[] = SERVICES): McpServerEntry[] {
  const problems: Problem[] = [];
  const sources: [string, Record<string, unknown>][] = [];
  const file = env.MCP_SERVERS_FILE?.trim();
  if (file) {
    let text: string | undefined;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      problems.push({
        variable: 'MCP_SERVERS_FILE',
        message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      });
    }
    if (text !== undefined) sources.push(['MCP_SERVERS_FILE', parseDocument(text, 'MCP_SERVERS_FILE', problems)]);
  }
  const inline = env.MCP_SERVERS?.trim();
  if (inline) {
    let doc: unknown;
    try {
      doc = JSON.parse(inline);
      sources.push(['MCP_SERVERS', parseDocument(JSON.stringify(doc), 'MCP_SERVERS', problems)]);
    } catch (err) {
      problems.push({ variable: 'MCP_SERVERS', message: `is not JSON: ${(err as Error).message}` });
    }
  }

  const specs: McpServerEntry[] = [];
  const seen = new Set<string>();
  const taken = new Set(inventory.map((s) => s.id));
  for (const [variable, servers] of sources) {
    for (const [id, raw] of Object.entries(servers)) {
      const where = `${variable}: ${id}`;
      if (!MCP_SERVER_ID.test(id)) {
        problems.push({
          variable: where,
          message: 'the id must be 1-40 lower-case letters, digits or "-" (it prefixes qualified tool names)',
        });
        continue;
      }
      if (taken.has(id)) {
        problems.push({ variable: where, message: `${id} is a fleet service of the inventory; give the MCP server another id` });
        continue;
      }
      if (seen.has(id)) {
        problems.push({ variable: where, message: `${id} is declared twice` });
        continue;
      }
      seen.add(id);
      const entryRaw = fromOtherClients(raw, where, problems);
      // judged by the schema its shape asks for, so that the issue names the field (a bad protocolVersion, say)
      const shape = typeof entryRaw === 'object' && entryRaw !== null ? entryRaw : {};
      const parsed = ('url' in shape ? httpServer : 'command' in shape ? stdioServer : serverEntry).safeParse(entryRaw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        problems.push({
          variable: where,
          message: `needs "command" (stdio) or "url" (streamable-http): ${issue.path.join('.') || 'entry'}: ${issue.message}`,
        });
        continue;
      }
      const entry = parsed.data;
      if (entry.disabled) continue;
      const declared = {
        ...(entry.tools ? { tools: entry.tools } : {}),
        ...(entry.primaryFor ? { primaryFor: entry.primaryFor } : {}),
        ...(entry.pin ? { pin: entry.pin } : {}),
        ...(entry.limits ? { limits: entry.limits } : {}),
        ...(entry.timeoutMs ? { timeoutMs: entry.timeoutMs } : {}),
      };
      const secrets: string[] = [];
      const era = entry.protocolVersion ? { protocolVersion: entry.protocolVersion } : {};
      if ('command' in entry) {
        const envOut: Record<string, string> = {};
        for (const [k, v] of Object.entries(entry.env)) envOut[k] = expand(v, env, `${where}.env.${k}`, problems, secrets);
        const args = entry.args.map((a, i) => expand(a, env, `${where}.args.${i}`, problems, secrets));
        const base = file ? path.dirname(file) : process.cwd();
        const cwd = entry.cwd ? path.resolve(base, entry.cwd) : undefined;
        const within = (paths: string[] | undefined, key: string) =>
          paths?.map((p, i) => path.resolve(base, expand(p, env, `${where}.sandbox.${key}.${i}`, problems, [])));
        const sandbox =
          entry.sandbox === false
            ? false
            : entry.sandbox && {
                ...(entry.sandbox.network !== undefined ? { network: entry.sandbox.network } : {}),
                ...(entry.sandbox.readOnly ? { readOnly: within(entry.sandbox.readOnly, 'readOnly') } : {}),
                ...(entry.sandbox.writable ? { writable: within(entry.sandbox.writable, 'writable') } : {}),
              };
        // credentials written as they are (a database URL's password, --api-key X, GITHUB_TOKEN) are masked as ${VAR} values are
        const literal = literalSecrets({ args: entry.args, env: entry.env });
        secrets.push(...literal);
        specs.push({
          id,
          // shown as declared: an argument's ${VAR} stays a name
          url: maskSecrets(literal)(
            `stdio:${[entry.command, ...entry.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`,
          ).slice(0, 300),
          ...declared,
          ...(secrets.length ? { secrets } : {}),
          mcp: {
            transport: 'stdio',
            command: entry.command,
            args,
            ...(cwd ? { cwd } : {}),
            env: envOut,
            ...era,
            ...(sandbox !== undefined ? { sandbox } : {}),
          },
        });
      } else {
        const url = expand(entry.url, env, `${where}.url`, problems, secrets);
        let ok = false;
        try {
          ok = ['http:', 'https:'].includes(new URL(url).protocol);
        } catch {
          ok = false;
        }
        if (!ok) {
          problems.push({ variable: `${where}.url`, message: 'must be an http(s) URL' });
          continue;
        }
        if (entry.type === 'sse' && entry.protocolVersion === '2026-07-28') {
          problems.push({
            variable: `${where}.protocolVersion`,
            message: 'an SSE server speaks a 2025-era revision; leave protocolVersion out',
          });
          continue;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(entry.headers)) headers[k] = expand(v, env, `${where}.headers.${k}`, problems, secrets);
        // (the URL's own password, written as it is, too: it is sent as Basic authorization below)
        secrets.push(...literalSecrets({ args: [entry.url], headers: entry.headers }));
        // `user:password@` becomes Basic authorization (fetch refuses a URL with credentials), unless one is declared
        const target = new URL(url);
        if (target.username || target.password) {
          const basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64');
          if (!Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) headers.Authorization = `Basic ${basic}`;
          secrets.push(basic);
          target.username = '';
          target.password = '';
        }
        specs.push({
          id,
          url: shownUrl(entry.url, url, secrets),
          ...declared,
          ...(secrets.length ? { secrets } : {}),
          mcp:
            entry.type === 'sse'
              ? { transport: 'sse', url: target.href, headers }
              : { transport: 'streamable-http', url: target.href, headers, ...era },
        });
      }
    }
  }
  if (problems.length) throw new ConfigError(SERVICE_ID, problems);
  return specs;
}

/** Replaced by `true` in the fleet's build (scripts/build/build.ts); not defined when run from source (tsx, jest). */
declare const __FLEET_BUILT__: boolean | undefined;
const RUNS_BUILT = typeof __FLEET_BUILT__ !== 'undefined' && __FLEET_BUILT__ === true;

/** Variables an inventory stdio server reads from the gateway's environment when the gateway starts it. */
const PASSED_TO_STDIO = /^(WORKSPACE_ROOTS|DATA_DIR|LOG_LEVEL|LLM_[A-Z0-9_]+|TOOLKIT_[A-Z0-9_]+|GIT_TIMEOUT_MS|SANDBOX(_[A-Z0-9_]+)?)$/;

/**
 * The inventory's built stdio servers (toolkit-mcp-server), started by the gateway from this
 * checkout with the same Node, the way the gateway itself runs: from the build
 * (dist/services/<id>/server.js, scripts/build) when it runs built, else from the TypeScript
 * source with tsx; left out, with the reason, where that file is not here.
 */
export function inventoryStdioServers(
  env: Env,
  inventory: readonly ServiceEntry[] = SERVICES,
  repoRoot = path.resolve(__dirname, '../../../..'),
  built = RUNS_BUILT,
): { specs: McpServerEntry[]; skipped: string[] } {
  const specs: McpServerEntry[] = [];
  const skipped: string[] = [];
  const passed: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && PASSED_TO_STDIO.test(k)) passed[k] = v;
  for (const entry of inventory.filter((s) => s.pattern === 'stdio' && s.status === 'available')) {
    const server = built
      ? path.join(repoRoot, 'dist', 'services', entry.id, 'server.js')
      : path.join(repoRoot, 'services', entry.id, 'src', 'server.ts');
    if (!fs.existsSync(server)) {
      skipped.push(`${entry.id}: ${server} is not in this installation`);
      continue;
    }
    specs.push({
      id: entry.id,
      url: `stdio:${entry.id}`,
      tools: [...entry.tools],
      ...(entry.primaryFor ? { primaryFor: [...entry.primaryFor] } : {}),
      mcp: {
        transport: 'stdio',
        command: process.execPath,
        // the tool services' Node flags, as the launcher gives them (packages/kit/src/node-args.ts)
        args: [...SERVICE_NODE_ARGS, ...(built ? [] : ['--import', 'tsx']), server],
        cwd: repoRoot,
        // SANDBOX=outer: the programs it starts (precommit's git) run in the sandbox below, as bubblewrap
        // cannot nest (a sandbox's /proc is not one it may mount again; as root, neither is its uid map);
        // the launcher drops it when it starts the server unsandboxed. The operator's SANDBOX=off stands.
        env: { ...passed, SANDBOX: passed.SANDBOX === 'off' ? 'off' : 'outer' },
        // the fleet's own stdio servers are written with the SDK's 2025 server: no server/discover
        // probe (a second process at every start, whose expected refusal was logged as a warning)
        protocolVersion: '2025-11-25',
        // sandboxed like any stdio server: this checkout (its cwd) and the workspace roots it reads, read-only
        sandbox: {
          readOnly: (passed.WORKSPACE_ROOTS ?? '')
            .split(',')
            .map((r) => r.trim())
            .filter((r) => path.isAbsolute(r)),
        },
      },
    });
  }
  return { specs, skipped };
}
