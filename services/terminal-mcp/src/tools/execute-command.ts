import fs from 'node:fs/promises';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { TerminalDeps } from '../deps';
import { planCommand } from '../exec/command-line';
import { runProcess } from '../exec/run-process';

export function executeCommandTool({ config, workspace, logger, sandbox }: TerminalDeps) {
  const allowed = config.TERMINAL_ALLOWED_COMMANDS;
  const maxTimeout = config.TERMINAL_TIMEOUT_MS;
  const maxOutput = config.TERMINAL_MAX_OUTPUT_BYTES;
  const programs = allowed.includes('*') ? 'any program' : `only these programs: ${allowed.join(', ')}`;
  return defineTool({
    name: 'execute_command',
    title: 'Execute command',
    description:
      (config.TERMINAL_ALLOW_SHELL
        ? `Run a command line through ${config.TERMINAL_SHELL} -c (pipes, redirects and globs work; command substitution only when any program is allowed). `
        : 'Run one program with arguments, without a shell: pipes, ;, &&, redirects, $VAR, $(...), backticks and globs are refused (FORBIDDEN); pass literal arguments in args[]. ') +
      `Allowed: ${programs}. Runs in cwd (inside the workspace roots; default the first root) inside an OS sandbox that sees only the workspace roots ` +
      `(${config.TERMINAL_WRITABLE_ROOTS ? 'read-write' : 'read-only'}) and the system's programs, with no network and a scrubbed environment (no secrets); everything it starts ends with it. ` +
      `Time limit ${maxTimeout} ms at most (default the same; the process group is killed, timedOut: true); stdout and stderr keep at most ${maxOutput} bytes each ` +
      '(the program is stopped, truncated: true). A non-zero exit code is a normal result; an unknown program is NOT_FOUND.',
    input: z
      .object({
        command: z.string().min(1).max(16_384).describe('Program and arguments, e.g. "ls -la src" (quotes group words, as in a shell).'),
        args: z
          .array(z.string().max(16_384))
          .max(1000)
          .optional()
          .describe('Extra arguments passed literally, after those in command (no quoting or expansion).'),
        cwd: z.string().min(1).max(4096).optional().describe('Working directory inside the workspace roots; default the first root.'),
        timeoutMs: z
          .number()
          .int()
          .min(100)
          .max(maxTimeout)
          .optional()
          .describe(`Time limit in milliseconds (100-${maxTimeout}; default ${maxTimeout}).`),
        stdin: z.string().max(maxOutput).optional().describe('Text written to the program’s standard input (then closed).'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    timeoutMs: maxTimeout + 10_000,
    handler: async (args, ctx) => {
      const plan = planCommand(args.command, args.args, {
        allowed,
        allowShell: config.TERMINAL_ALLOW_SHELL,
        shell: config.TERMINAL_SHELL,
      });
      const cwd = await workspace.resolve(args.cwd ?? '.', { mustExist: true, field: 'cwd' });
      if (!(await fs.stat(cwd.absolute)).isDirectory()) {
        throw new AppError('VALIDATION_ERROR', `cwd "${args.cwd}" is a file; give a directory.`, {
          details: [{ path: 'cwd', message: 'not a directory' }],
        });
      }
      logger.info('execute_command', { requestId: ctx.requestId, programs: plan.programs, shell: plan.shell, cwd: cwd.relative || '.' });
      const result = await runProcess({
        file: plan.file,
        args: plan.args,
        cwd: cwd.absolute,
        env: config.CHILD_ENV,
        // Within the call's budget (the gateway's, when it sent one), so the command's own timedOut
        // result reaches the caller before anyone upstream gives up.
        timeoutMs: Math.max(100, Math.min(args.timeoutMs ?? maxTimeout, ctx.deadline - Date.now() - 250)),
        maxOutputBytes: maxOutput,
        stdin: args.stdin,
        signal: ctx.signal,
        sandbox,
        // The command sees the workspace roots and the system's programs, nothing else of the host.
        ...(config.TERMINAL_WRITABLE_ROOTS ? { writable: workspace.roots } : { readOnly: workspace.roots }),
      });
      return { ...result, cwd: cwd.relative || '.' };
    },
  });
}
