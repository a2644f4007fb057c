/**
 * Least privilege between services: each child gets only the variables its configuration schema
 * declares, the few the runtime needs, and the ones it reads by a name no schema can declare. A
 * secret set for one service (JWT_SECRET, a database URL, an admin token) is then not in the
 * environment of another, where a command that service runs could read it.
 *
 * The names come from each service's `src/config.ts` at launch (through tsx, or its build when the
 * launcher runs built), not from a generated list: a variable added to a schema reaches its service
 * with no step to forget.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES, envPrefix, type Env, type ServiceEntry } from '@mcp-fleet/inventory';
import { configSource, declaredEnvFile } from '../build/stamp';
import { csvList } from './data-dir';

const SERVICES_DIR = path.resolve(__dirname, '..', '..', 'services');

/**
 * Replaced by `true` in the built launcher (scripts/build), which reads the names the build took
 * from the same schemas (dist/declared-env.json) instead of loading every service's configuration.
 */
declare const __FLEET_BUILT__: boolean | undefined;
const RUNS_BUILT = typeof __FLEET_BUILT__ !== 'undefined' && __FLEET_BUILT__ === true;
let builtNames: Record<string, string[]> | undefined;
const builtDeclaredNames = () => (builtNames ??= JSON.parse(fs.readFileSync(declaredEnvFile(), 'utf8')) as Record<string, string[]>);

/** What Node, the C library and the programs a service starts need; none of them holds a credential. */
export const RUNTIME_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TERM',
  'NODE_ENV',
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
];
/** Locale categories, and the OpenTelemetry exporter's own settings (headers, timeouts) that the kit's tracing reads. */
export const RUNTIME_PREFIXES: readonly string[] = ['LC_', 'OTEL_'];

/** `${NAME}` references, as the gateway expands them in MCP_SERVERS and MCP_SERVERS_FILE. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Names the gateway's MCP server configuration references; an unreadable file is the gateway's to report. */
export function referencedNames(env: Env): string[] {
  let text = env.MCP_SERVERS ?? '';
  const file = env.MCP_SERVERS_FILE?.trim();
  if (file) {
    try {
      text += '\n' + fs.readFileSync(file, 'utf8');
    } catch {
      // the gateway refuses to start naming the file
    }
  }
  return [...text.matchAll(REFERENCE)].map((m) => m[1]);
}

/**
 * Variables a service reads by a name its schema cannot declare, by service id:
 * - the gateway expands `${NAME}` in its MCP server configuration, and starts the inventory's stdio
 *   servers (toolkit-mcp-server) with their own variables from its environment;
 * - terminal-mcp copies TERMINAL_ENV_PASSTHROUGH names into the commands it runs;
 * - git-mcp hands git the ssh agent's socket (its GIT_ENV_PASSTHROUGH) for pushes over ssh.
 */
export const DYNAMIC_NAMES: Readonly<Record<string, (env: Env) => string[]>> = {
  'mega-orchestrator': (env) => [
    ...referencedNames(env),
    ...SERVICES.filter((s) => s.pattern === 'stdio' && s.status === 'available').flatMap((s) => declaredNames(s.id)),
  ],
  'terminal-mcp': (env) => csvList(env.TERMINAL_ENV_PASSTHROUGH),
  'git-mcp': () => ['SSH_AUTH_SOCK'],
};

interface SchemaLike {
  def?: { type?: string; shape?: Record<string, unknown>; in?: SchemaLike; out?: SchemaLike; innerType?: SchemaLike };
}

/** The keys of a zod object schema, also through pipes, preprocessing and optional/default wrappers. */
export function schemaKeys(schema: SchemaLike | undefined): string[] | undefined {
  const def = schema?.def;
  if (!def) return undefined;
  if (def.type === 'object' && def.shape) return Object.keys(def.shape);
  if (def.type === 'pipe') return schemaKeys(def.in) ?? schemaKeys(def.out);
  return schemaKeys(def.innerType);
}

const declaredCache = new Map<string, string[]>();

/** The variables a service's configuration schema (`services/<id>/src/config.ts`, or the gateway's `src/core/config.ts`: stamp.ts's configSource) declares in its exported `configSchema`. */
export function declaredNames(id: string): string[] {
  const cached = declaredCache.get(id);
  if (cached) return cached;
  const file = configSource(id) ?? path.join(SERVICES_DIR, id, 'src', 'config.ts');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fromSource = () => (fs.existsSync(file) ? schemaKeys((require(file) as { configSchema?: SchemaLike }).configSchema) : undefined);
  const keys = RUNS_BUILT ? builtDeclaredNames()[id] : fromSource();
  if (!keys)
    throw new Error(
      `${path.relative(process.cwd(), file)} must export configSchema (a zod object): the launcher starts ${id} with only the variables it declares`,
    );
  declaredCache.set(id, keys);
  return keys;
}

/** Every name `entry` may receive from an environment like `env`. */
export function allowedNames(entry: ServiceEntry, env: Env): Set<string> {
  return new Set([
    ...RUNTIME_NAMES,
    ...declaredNames(entry.id),
    // the fleet's address book: where every service listens, as the launcher or the operator placed it
    ...SERVICES.flatMap((s) => [`${envPrefix(s.id)}_PORT`, `${envPrefix(s.id)}_URL`]),
    ...Object.keys(entry.extraPorts ?? {}),
    ...(DYNAMIC_NAMES[entry.id]?.(env) ?? []),
  ]);
}

function pick(env: Env, allowed: ReadonlySet<string>): Env {
  const out: Env = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (allowed.has(name) || RUNTIME_PREFIXES.some((p) => name.startsWith(p)))) out[name] = value;
  }
  return out;
}

/** `env` cut down to what `entry` may receive. */
export function serviceEnv(entry: ServiceEntry, env: Env): Env {
  return pick(env, allowedNames(entry, env));
}

/** `env` cut down to the runtime's names, for programs the launcher starts beside the fleet (Prometheus, Loki). */
export function runtimeEnv(env: Env): Env {
  return pick(env, new Set(RUNTIME_NAMES));
}
