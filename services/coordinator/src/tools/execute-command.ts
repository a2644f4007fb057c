import { z } from 'zod';
import { forwardSpec } from './forward';

export const executeCommand = forwardSpec({
  name: 'execute_command',
  service: 'terminal-mcp',
  title: 'Execute a command',
  description:
    "Run one allowlisted program with arguments in the first workspace root, in terminal-mcp's sandbox, without a shell unless terminal-mcp allows one (TERMINAL_ALLOWED_COMMANDS, TERMINAL_ALLOW_SHELL). Its time limit and output cap are terminal-mcp's (timedOut, truncated); a non-zero exit code is a normal result.",
  input: z
    .object({
      command: z.string().min(1).max(16_384).describe('Program and arguments, e.g. "ls -la src" (quotes group words, as in a shell).'),
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
});
