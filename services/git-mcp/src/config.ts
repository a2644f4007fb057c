import path from 'node:path';
import { baseEnvShape, int, bool, csv, loadConfig, processEnv, secretFilesEnvShape, type Env } from '@mcp-fleet/kit';
import { gitBaseEnv } from '@mcp-fleet/git';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { sandboxEnvShape } from '@mcp-fleet/sandbox';
import { z } from 'zod';

export const SERVICE_ID = 'git-mcp';

export { GIT_ENV_PASSTHROUGH } from '@mcp-fleet/git';

/** Transports git_push may use; `git://` (unauthenticated) and `ext::`/other remote helpers never. */
export const PUSH_PROTOCOLS = ['file', 'https', 'http', 'ssh'] as const;
export type PushProtocol = (typeof PUSH_PROTOCOLS)[number];

const identityPart = (what: string) =>
  z
    .string()
    .max(320)
    // eslint-disable-next-line no-control-regex
    .refine((v) => !/[<>\u0000-\u001f\u007f]/.test(v), 'no <, > or control characters')
    .optional()
    .describe(what);

export const configSchema = z.object({
  ...baseEnvShape,
  ...sandboxEnvShape,
  ...outboundEnvShape,
  ...secretFilesEnvShape,
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories that may hold repositories (comma-separated). Default: the working directory.',
  ),
  GIT_TIMEOUT_MS: int(30_000, 1000, 600_000).describe('Time limit of one git process (push included).'),
  GIT_MAX_DIFF_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024).describe('git_diff returns at most this many bytes of patch text.'),
  GIT_ALLOW_PUSH: bool(true).describe('git_push is refused with FORBIDDEN when false.'),
  GIT_PUSH_REMOTES_ALLOWLIST: csv([]).describe(
    'When set, git_push only pushes to these configured remote names. Empty: any configured remote.',
  ),
  GIT_PUSH_PROTOCOLS: csv(['file', 'https', 'ssh'])
    .pipe(z.array(z.enum(PUSH_PROTOCOLS)))
    .describe(
      'Transports git_push may use (comma-separated, of file, https, http, ssh). git://, ext:: and other remote helpers are never allowed. A network remote must also pass the outbound address policy (OUTBOUND_ALLOWLIST for private or loopback hosts).',
    ),
  GIT_SSH_KNOWN_HOSTS: z
    .string()
    .refine((p) => path.isAbsolute(p), 'an absolute path')
    .optional()
    .describe(
      'known_hosts file ssh pushes check the server against (mounted read-only into the sandbox). Unset: ssh pushes fail host-key verification (the service user’s ~/.ssh is never read).',
    ),
  GIT_DEFAULT_AUTHOR_NAME: identityPart('Commit identity (name) when neither the call nor the repository names one.'),
  GIT_DEFAULT_AUTHOR_EMAIL: identityPart('Commit identity (e-mail) when neither the call nor the repository names one.'),
});

export type Config = z.output<typeof configSchema> & {
  /** The scrubbed environment git runs with (GIT_ENV_PASSTHROUGH names only; PATH without relative entries). */
  GIT_BASE_ENV: Record<string, string>;
  /** The ssh agent's socket (SSH_AUTH_SOCK), made visible to ssh pushes only. */
  SSH_AGENT_SOCKET?: string;
};

export function readConfig(env: Env = processEnv()): Config {
  const parsed = loadConfig(SERVICE_ID, configSchema, env);
  const base = gitBaseEnv(env);
  const socket = env.SSH_AUTH_SOCK;
  return { ...parsed, GIT_BASE_ENV: base, ...(socket && path.isAbsolute(socket) ? { SSH_AGENT_SOCKET: socket } : {}) };
}
