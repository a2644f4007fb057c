import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export class ConfigError extends Error {
  constructor(
    readonly service: string,
    readonly problems: { variable: string; message: string }[],
  ) {
    super(
      `${service}: invalid configuration:\n` +
        problems.map((p) => `  - ${p.variable}: ${p.message}`).join('\n') +
        '\nFix these environment variables and start again.',
    );
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** "a,b , c" -> ["a","b","c"]; empty or missing -> default. */
export const csv = (fallback: string[] = []) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined || v.trim() === ''
        ? fallback
        : v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
    );

/** ALLOWED_ORIGINS, a base variable of every service (the kit's hostOriginRule); services that declared it themselves keep this. */
export const allowedOriginsEnv = () =>
  csv([]).describe(
    'Browser origins (scheme://host[:port], comma-separated) allowed to call this service besides local pages (localhost, *.localhost, 127.0.0.1, [::1]) and its own origin; a request with any other Origin gets 403 on every route. Requests without Origin (curl, SDKs, services) are always allowed.',
  );

/** An empty value (`FOO=`) is unset, as shells, compose files and .env files write it. */
const emptyIsUnset = (v: unknown) => (v === '' ? undefined : v);

/** 1/true/yes/on -> true; 0/false/no/off -> false; unset or empty -> fallback. */
export const bool = (fallback: boolean) =>
  z.preprocess(
    emptyIsUnset,
    z
      .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', 'TRUE', 'FALSE', 'True', 'False'])
      .optional()
      .transform((v) => (v === undefined ? fallback : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()))),
  );

/** An optional variable where an empty value (`FOO=`) means unset, as shells and .env files write it. */
export const unsetIfEmpty = <S extends z.ZodType>(schema: S) => z.preprocess(emptyIsUnset, schema.optional());

/** A port, optional; empty is unset (not port 0, which would pick a random one). */
export const port = () => unsetIfEmpty(z.coerce.number().int().min(0).max(65535));

/**
 * A whole number from the environment within [min, max], `fallback` when unset or empty: counts,
 * sizes, limits. (`z.coerce` alone would read `FOO=` as 0.)
 */
export const int = (fallback: number, min: number, max: number) =>
  z.preprocess(emptyIsUnset, z.coerce.number().int().min(min).max(max).default(fallback));

/** A duration in milliseconds within [min, max], `fallback` when unset. */
export const ms = (fallback: number, min = 10, max = 3_600_000) => int(fallback, min, max);

/** An optional PostgreSQL connection URL (postgres:// or postgresql://); empty means unset. */
export const postgresUrl = () =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.trim() || undefined : v),
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
      .optional(),
  );

/** An optional URL where empty means unset; `protocol` limits the schemes (default http and https). */
export const optionalUrl = (protocol: RegExp = /^https?$/) =>
  z.preprocess((v) => (typeof v === 'string' ? v.trim() || undefined : v), z.url({ protocol }).optional());

/**
 * Where the fleet keeps its state when DATA_DIR is unset: `$XDG_STATE_HOME/mcp-fleet`, else
 * `~/.local/state/mcp-fleet` (a relative XDG_STATE_HOME is ignored, as the XDG spec says). Outside
 * any checkout, so the file tools never see it; the launcher uses the same default.
 */
export function defaultDataDir(env: Env = process.env): string {
  const state =
    env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(state, 'mcp-fleet');
}

export const DEFAULT_DATA_DIR = defaultDataDir();

/** Variables every service understands. Services extend this with their own. */
export const baseEnvShape = {
  HOST: z.string().min(1).default('127.0.0.1').describe('Interface to listen on; loopback unless you mean to expose the service.'),
  PORT: port().describe('Port to listen on; defaults to the documented port of the service.'),
  LOG_LEVEL: z
    .enum(['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'])
    .default('info')
    .describe('Least severe level written to the JSON log.'),
  LOG_FILE: z.string().optional().describe('Also append JSON log lines to this file (the launcher uses DATA_DIR/logs/<service>.log).'),
  LOKI_URL: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'Also push the JSON log lines to Grafana Loki at this base URL (e.g. http://loki:3100); unset, logs go to stdout and LOG_FILE only.',
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'Export trace spans over OTLP/HTTP to <this>/v1/traces (OpenTelemetry); unset, only W3C trace ids travel and reach the logs.',
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'Full OTLP/HTTP traces URL, overriding OTEL_EXPORTER_OTLP_ENDPOINT for traces.',
  ),
  DATA_DIR: z
    .string()
    .min(1)
    .default(DEFAULT_DATA_DIR)
    .describe(
      'Where embedded stores, secrets and logs live; default $XDG_STATE_HOME/mcp-fleet, else ~/.local/state/mcp-fleet. The launcher refuses one that overlaps a workspace root.',
    ),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)?$/i, 'a size such as 1mb or 524288')
    .default('1mb')
    .describe('Largest accepted request body (PAYLOAD_TOO_LARGE above it).'),
  TOOL_TIMEOUT_MS: int(30_000, 100, 600_000).describe('Default time limit of one tool call (TIMEOUT above it).'),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 120_000).describe('How long SIGTERM waits for open requests before closing connections.'),
  ALLOWED_HOSTS: csv([]).describe(
    'Host names (comma-separated, any port) this service answers besides localhost, *.localhost, 127.0.0.1, [::1] and the HOST it listens on; any other Host header gets 403 (DNS-rebinding protection). Listening on 0.0.0.0, list the names clients call it by (compose sets the service name).',
  ),
  ALLOWED_ORIGINS: allowedOriginsEnv(),
  CHANNEL_SOCKET_DIR: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .describe(
      "A private directory (created owner-only) for the gateway's channel over Unix sockets: a service that offers the channel also listens on <dir>/channel-<PORT>.sock (owner-only), and the gateway reaches a loopback service's channel there, with no TCP stack per frame (5-9 % less CPU per call in each process). The launcher sets DATA_DIR/run; unset: TCP only.",
    ),
  REQUEST_TIMEOUT_MS: int(30_000, 1_000, 3_600_000).describe(
    "Time limit for receiving a request's headers and body; a client still sending after it gets 408 and the connection is closed. Answers (SSE streams, long tool calls) are not limited by it.",
  ),
};

export const baseEnvSchema = z.object(baseEnvShape);
export type BaseConfig = z.output<typeof baseEnvSchema>;

/**
 * Parse configuration once, at boot. Fails fast naming every bad variable.
 * This is the only place in the fleet that reads process.env.
 */
export function loadConfig<S extends z.ZodObject>(service: string, schema: S, env: Env = process.env): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => ({
    variable: issue.path.map(String).join('.') || '(environment)',
    message: issue.message,
  }));
  throw new ConfigError(service, problems);
}

/** The process environment, for code that must pass it on (child processes, the launcher). */
export function processEnv(): Env {
  return process.env;
}
