import fs from 'node:fs';
import path from 'node:path';
import { defaultDataDir } from '../../packages/kit/src/config';
import { parseEnvFile } from '../../packages/kit/src/envfile';
import { HOT_PATH_NODE_ARGS, SERVICE_NODE_ARGS } from '../../packages/kit/src/node-args';
import {
  FLEET_PROFILES,
  GATEWAY_ID,
  SERVICES,
  envPrefix,
  launchedServices,
  polledByGateway,
  profilePort,
  resolvePort,
  type Env,
  type FleetProfile,
  type ServiceEntry,
} from '@mcp-fleet/inventory';
import { csvList, stateOverlaps } from './data-dir';
import { serviceEnv } from './service-env';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface LaunchSpec {
  entry: ServiceEntry;
  port: number;
  url: string;
  script: string;
  /** Node flags of this service's process (before the launcher's own, e.g. --import tsx). */
  nodeArgs?: string[];
  env: Env;
  logFile: string;
}

/**
 * Every tool service's Node flags, and those of a service on the agents' hot path (the inventory's
 * `hotPath`); why these: packages/kit/src/node-args.ts. The gateway gives the first to its stdio servers too.
 */
export { HOT_PATH_NODE_ARGS, SERVICE_NODE_ARGS };

/** The gateway's Node flags: its throughput is measured with them (`pnpm bench vs-supergateway`), apart from the idle tool services'. */
export const GATEWAY_NODE_ARGS: readonly string[] = ['--max-semi-space-size=16'];

/** The launcher's own Node flags (./fleet and the footprint bench start it with them): it waits on its children and relays their lines. */
export const LAUNCHER_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1', '--optimize-for-size'];

/** A process's flags by default (nodeArgsOf without an override). */
export function defaultNodeArgs(id: string): string[] {
  if (id === GATEWAY_ID) return [...GATEWAY_NODE_ARGS];
  return [...(SERVICES.find((s) => s.id === id)?.hotPath ? HOT_PATH_NODE_ARGS : SERVICE_NODE_ARGS)];
}

/**
 * A process's Node flags: the defaults above, or FLEET_NODE_ARGS (every service but the gateway)
 * and FLEET_GATEWAY_NODE_ARGS (the gateway), space-separated, in their place (`-` for none): for
 * measuring other flags (`pnpm bench footprint-flags`) or running with your own.
 */
export function nodeArgsOf(id: string, env: Env): string[] {
  const own = id === GATEWAY_ID ? env.FLEET_GATEWAY_NODE_ARGS : env.FLEET_NODE_ARGS;
  if (own === undefined || own.trim() === '') return defaultNodeArgs(id);
  const args = own.trim() === '-' ? [] : own.trim().split(/\s+/);
  const bad = args.find((a) => !a.startsWith('--'));
  if (bad !== undefined)
    throw new Error(
      `${id === GATEWAY_ID ? 'FLEET_GATEWAY_NODE_ARGS' : 'FLEET_NODE_ARGS'} takes Node flags (--name or --name=value), got "${bad}"`,
    );
  return args;
}

export interface FleetOptions {
  env: Env;
  /** Start only these ids (the gateway is always added). */
  only?: string[];
}

/** An empty value (`FOO=`) is unset, as the services read it. */
const set = (value: string | undefined) => (value?.trim() ? value : undefined);

/**
 * What the launcher starts, on which ports, with which environment: derived from the inventory.
 * Each service gets only the variables it declares (service-env.ts); the plan is refused when the
 * fleet's state overlaps a workspace root (data-dir.ts).
 */
export function planFleet({ env, only }: FleetOptions): { specs: LaunchSpec[]; dataDir: string; stateFile: string } {
  const offset = Number(env.FLEET_PORT_OFFSET ?? 0);
  if (!Number.isInteger(offset) || offset < 0 || offset > 50_000)
    throw new Error(`FLEET_PORT_OFFSET must be a whole number 0-50000, got "${env.FLEET_PORT_OFFSET}"`);
  const dataDir = path.resolve(set(env.FLEET_DATA_DIR) ?? set(env.DATA_DIR) ?? defaultDataDir(env));
  const workspaceRoots = set(env.WORKSPACE_ROOTS) ?? REPO_ROOT;
  const logDir = path.join(dataDir, 'logs');
  const profile = (env.FLEET_PROFILE || 'default') as FleetProfile;
  if (!FLEET_PROFILES.includes(profile))
    throw new Error(`FLEET_PROFILE must be one of ${FLEET_PROFILES.join(', ')}, got "${env.FLEET_PROFILE}"`);
  // The reference profile serves the old clients' ports (8001-8008, 8011); an explicit <ID>_PORT still wins.
  const portOf = (e: ServiceEntry) => (env[`${envPrefix(e.id)}_PORT`] ? resolvePort(e, env) : profilePort(e, profile) + offset);

  // Every child learns every port, so the gateway finds services moved by FLEET_PORT_OFFSET.
  const portEnv: Env = {};
  for (const e of SERVICES) portEnv[`${envPrefix(e.id)}_PORT`] = String(portOf(e));

  const wanted = launchedServices().filter((e) => !only || only.includes(e.id));
  const gateway = SERVICES.find((s) => s.id === GATEWAY_ID)!;
  const secretsDir = path.resolve(set(env.SECRETS_EXPORT_DIR) ?? path.join(dataDir, 'secrets-ui', 'env'));
  const specs = [...wanted, gateway].map((entry): LaunchSpec => {
    const port = portOf(entry);
    const logFile = path.join(logDir, `${entry.id}.log`);
    return {
      entry,
      port,
      url: `http://127.0.0.1:${port}`,
      script: path.join(REPO_ROOT, 'services', entry.id, 'src', 'server.ts'),
      nodeArgs: nodeArgsOf(entry.id, env),
      logFile,
      env: serviceEnv(entry, {
        ...env,
        // The runtime secrets written by secrets-ui win over the inherited environment.
        ...runtimeSecrets(secretsDir, entry.id),
        ...portEnv,
        PORT: String(port),
        // the service's other listening ports (e.g. mqtt-mcp's embedded broker) move with the offset
        ...Object.fromEntries(
          Object.entries(entry.extraPorts ?? {}).map(([name, p]) => [
            name,
            env[name] ?? String(profilePort({ ...entry, port: p }, profile) + offset),
          ]),
        ),
        // the gateway polls just the services started here (all of them without --only); not the coordinator, which calls it
        ...(only && entry.id === GATEWAY_ID
          ? {
              FLEET_SERVICES: wanted
                .filter(polledByGateway)
                .map((e) => e.id)
                .join(','),
            }
          : {}),
        HOST: env.HOST ?? '127.0.0.1',
        DATA_DIR: dataDir,
        // the gateway's channel to each service over a Unix socket in the fleet's own directory (owner-only); "" turns it off
        CHANNEL_SOCKET_DIR: env.CHANNEL_SOCKET_DIR ?? path.join(dataDir, 'run'),
        LOG_FILE: logFile,
        LOG_ROOTS: set(env.LOG_ROOTS) ?? logDir,
        WORKSPACE_ROOTS: workspaceRoots,
      }),
    };
  });
  const problems = stateOverlaps({
    dataDir,
    logDir,
    workspaceRoots: csvList(workspaceRoots),
    logRoots: csvList(set(env.LOG_ROOTS) ?? logDir),
    envs: specs.map((s) => ({ id: s.entry.id, env: s.env })),
  });
  if (problems.length) throw new Error(`the fleet's state overlaps a directory its tools serve:\n  - ${problems.join('\n  - ')}`);
  return { specs, dataDir, stateFile: path.join(dataDir, 'fleet.json') };
}

/** The export file secrets-ui writes for a service (`<dir>/<id>.env`), if there is one. */
export function runtimeSecrets(dir: string, id: string): Env {
  const file = path.join(dir, `${id}.env`);
  if (!fs.existsSync(file)) return {};
  return parseEnvFile(fs.readFileSync(file, 'utf8'));
}
