import fs from 'node:fs';
import path from 'node:path';
import { defaultDataDir } from '../../packages/kit/src/config';
import { parseEnvFile } from '../../packages/kit/src/envfile';
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
 * V8's young generation capped at 1 MiB per semi-space (Node's default grows it to 16 MiB): an idle
 * service polled by the gateway every few seconds never shrinks it back, so each held 8-30 MiB of
 * it for nothing; 26 processes on one machine make that a third of the fleet's memory. The tools'
 * allocation rates are far below what a larger young generation pays off for, and the gateway's
 * throughput was measured the same with it (docs/operations.md, "Footprint").
 */
export const SERVICE_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1'];

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
      nodeArgs: [...SERVICE_NODE_ARGS],
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
