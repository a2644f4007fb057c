import path from 'node:path';
import { baseEnvShape, bool, csv, isSecretName, loadConfig, processEnv, type Env, int, secretFilesEnvShape } from '@mcp-fleet/kit';
import { sandboxEnvShape } from '@mcp-fleet/sandbox';
import { z } from 'zod';

export const SERVICE_ID = 'terminal-mcp';

/**
 * Programs allowed by default: they read and report, and neither start other programs nor write
 * files (sort, uniq and date options that would are refused per call). Interpreters (node, python,
 * sh), git, env, xargs and find are left out because each can run arbitrary code.
 */
export const DEFAULT_ALLOWED_COMMANDS = [
  'ls', 'cat', 'echo', 'pwd', 'head', 'tail', 'wc', 'grep', 'date', 'whoami', 'uname', 'sort', 'uniq',
  'diff', 'stat', 'du', 'df', 'true', 'false', 'sleep', 'printf', 'id', 'basename', 'dirname', 'cut', 'tr',
]; // prettier-ignore

/** Environment names every child gets (when the service has them), besides LC_* and TERMINAL_ENV_PASSTHROUGH. */
export const CHILD_ENV_NAMES = ['PATH', 'HOME', 'LANG', 'TERM', 'TZ'];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  ...sandboxEnvShape,
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories commands may run in and `directory` may list (comma-separated). Default: the working directory.',
  ),
  TERMINAL_ALLOWED_COMMANDS: csv(DEFAULT_ALLOWED_COMMANDS).describe(
    'Program names (or exact paths) execute_command may start; `*` allows any program.',
  ),
  TERMINAL_ALLOW_SHELL: bool(false).describe(
    'Run `command` through TERMINAL_SHELL -c (pipes, redirects, globs) instead of refusing shell syntax.',
  ),
  TERMINAL_SHELL: z
    .string()
    .startsWith('/', 'an absolute path such as /bin/sh')
    .default('/bin/sh')
    .describe('Shell used only when shell mode is enabled (absolute path).'),
  TERMINAL_WRITABLE_ROOTS: bool(true).describe(
    'Mount the workspace roots read-write inside the sandbox (commands may change files there); false mounts them read-only.',
  ),
  TERMINAL_TIMEOUT_MS: int(30_000, 100, 600_000).describe('Default and largest time limit of one command.'),
  TERMINAL_MAX_OUTPUT_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024).describe('stdout and stderr each keep at most this many bytes.'),
  TERMINAL_ENV_PASSTHROUGH: csv([])
    .pipe(
      z.array(
        z
          .string()
          .regex(ENV_NAME, 'environment variable names only')
          .refine((name) => !isSecretName(name), 'looks like a secret; secrets are never passed to commands'),
      ),
    )
    // A list of variable names, not a secret (the secrets UI reads this marker).
    .meta({ secret: false })
    .describe('Extra environment names copied into children; names that look like secrets are refused.'),
});

export type Config = z.output<typeof configSchema> & {
  /** The scrubbed environment every command runs with. */
  CHILD_ENV: Record<string, string>;
};

/** PATH without empty or relative entries, so a program is never found in the command's own cwd. */
function safePath(value: string): string {
  return value
    .split(':')
    .filter((dir) => dir !== '' && path.isAbsolute(dir))
    .join(':');
}

export function childEnvFrom(env: Env, passthrough: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isSecretName(name)) continue;
    if (CHILD_ENV_NAMES.includes(name) || name.startsWith('LC_') || passthrough.includes(name)) out[name] = value;
  }
  if (out.PATH !== undefined) out.PATH = safePath(out.PATH);
  else out.PATH = '/usr/local/bin:/usr/bin:/bin';
  return out;
}

export function readConfig(env: Env = processEnv()): Config {
  const parsed = loadConfig(SERVICE_ID, configSchema, env);
  return { ...parsed, CHILD_ENV: childEnvFrom(env, parsed.TERMINAL_ENV_PASSTHROUGH) };
}
