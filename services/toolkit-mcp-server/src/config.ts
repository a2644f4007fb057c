// the subpath: the package's index loads simple-git, which the toolkit loads at its first precommit
import { gitBaseEnv } from '@mcp-fleet/git/env';
import { baseEnvShape, int, csv, loadConfig, processEnv, unsetIfEmpty, type Env, secretFilesEnvShape } from '@mcp-fleet/kit';
import { sandboxEnvShape } from '@mcp-fleet/sandbox';
import { z } from 'zod';

export const SERVICE_ID = 'toolkit-mcp-server';

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  ...sandboxEnvShape,
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Comma-separated directories the tools may read; relative paths resolve against the first.',
  ),
  LLM_BASE_URL: unsetIfEmpty(z.string().url().optional()).describe(
    'OpenAI-compatible endpoint base (e.g. http://127.0.0.1:11434/v1); the model-backed tools POST {base}/chat/completions.',
  ),
  LLM_API_KEY: unsetIfEmpty(z.string().optional()).describe('Bearer token for LLM_BASE_URL, if it needs one.'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('Model name sent to the chat-completions endpoint.'),
  LLM_TIMEOUT_MS: int(120_000, 1000, 600_000).describe('Time limit of one chat-completions request.'),
  TOOLKIT_MAX_FILE_BYTES: int(262_144, 1024, 16_777_216).describe(
    'Largest file fileretrieve returns and the model-backed tools send as context.',
  ),
  GIT_TIMEOUT_MS: int(30_000, 1000, 600_000).describe('Time limit of one git process precommit starts (each runs inside the OS sandbox).'),
});

export type Config = z.output<typeof configSchema> & {
  /** The scrubbed environment precommit's git runs with (PATH and TZ only; @mcp-fleet/git's gitBaseEnv). */
  GIT_BASE_ENV: Record<string, string>;
};

export function readConfig(env: Env = processEnv()): Config {
  return { ...loadConfig(SERVICE_ID, configSchema, env), GIT_BASE_ENV: gitBaseEnv(env) };
}
