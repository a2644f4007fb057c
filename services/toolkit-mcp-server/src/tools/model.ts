import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { readWorkspaceFile, type ToolDeps } from './context';

interface ModelToolSpec {
  name: string;
  title: string;
  purpose: string;
  system: string;
}

export const MODEL_TOOLS: ModelToolSpec[] = [
  {
    name: 'thinkdeep',
    title: 'Think deep',
    purpose: 'Extended reasoning about a problem',
    system:
      'You are a careful senior engineer. Reason step by step about the problem, state assumptions, weigh alternatives and end with a clear recommendation.',
  },
  {
    name: 'codereview',
    title: 'Code review',
    purpose: 'A code review of the given files',
    system:
      'You are a strict code reviewer. List concrete issues (bugs, security, performance, readability) with file and line, most severe first, then brief suggestions.',
  },
  {
    name: 'debug',
    title: 'Debug',
    purpose: 'Root-cause analysis of a bug from its symptoms and the given files',
    system:
      'You are a debugging expert. From the symptoms and code, form hypotheses, rank them by likelihood, name the most likely root cause with evidence, and propose a fix.',
  },
  {
    name: 'chat',
    title: 'Chat',
    purpose: 'A general conversation turn with optional file context',
    system: 'You are a helpful engineering assistant. Answer concisely.',
  },
  {
    name: 'testgen',
    title: 'Generate tests',
    purpose: 'Unit tests for the given files',
    system:
      "You write thorough, runnable unit tests in the project's language and test framework, covering edge cases and failures. Output only code with brief comments.",
  },
  {
    name: 'refactor',
    title: 'Refactor',
    purpose: 'Refactoring proposals for the given files',
    system:
      'You propose behaviour-preserving refactorings: extract, rename, simplify, remove duplication. Give each as a small diff with the reason.',
  },
];

const MAX_CONTEXT_FILES = 20;

export function modelTool(deps: ToolDeps, spec: ModelToolSpec) {
  return defineTool({
    name: spec.name,
    title: spec.title,
    description: `${spec.purpose}, answered by the OpenAI-compatible chat endpoint named by LLM_BASE_URL (model LLM_MODEL, key LLM_API_KEY); without LLM_BASE_URL it answers NOT_CONFIGURED. Up to ${MAX_CONTEXT_FILES} workspace files are read offline and sent as context (each at most TOOLKIT_MAX_FILE_BYTES); the request is limited to LLM_TIMEOUT_MS.`,
    input: z
      .object({
        prompt: z.string().min(1).max(100_000).describe('The question, task or symptoms.'),
        files: z.array(z.string().min(1).max(4096)).max(MAX_CONTEXT_FILES).default([]).describe('Workspace files to include as context.'),
        temperature: z.number().min(0).max(2).optional().describe('Sampling temperature passed to the model.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
    timeoutMs: deps.config.LLM_TIMEOUT_MS + 5000,
    handler: async (args, ctx) => {
      const context = [];
      for (const f of args.files) context.push(await readWorkspaceFile(deps, f, 'files'));
      const base = deps.config.LLM_BASE_URL;
      if (!base) {
        throw new AppError(
          'NOT_CONFIGURED',
          `${spec.name} needs a model: set LLM_BASE_URL (an OpenAI-compatible /v1 base URL), LLM_MODEL and, if the endpoint needs one, LLM_API_KEY.`,
          {
            details: [{ path: 'LLM_BASE_URL', message: 'not set' }],
          },
        );
      }
      const user = [args.prompt, ...context.map((c) => `\n--- ${c.relative} ---\n${c.text}`)].join('\n');
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.config.LLM_TIMEOUT_MS)]);
      let res: Response;
      try {
        res = await fetch(`${base.replace(/\/+$/, '')}/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(deps.config.LLM_API_KEY ? { authorization: `Bearer ${deps.config.LLM_API_KEY}` } : {}),
          },
          body: JSON.stringify({
            model: deps.config.LLM_MODEL,
            messages: [
              { role: 'system', content: spec.system },
              { role: 'user', content: user },
            ],
            ...(args.temperature !== undefined ? { temperature: args.temperature } : {}),
          }),
          signal,
        });
      } catch (err) {
        if ((err as Error).name === 'TimeoutError')
          throw new AppError('TIMEOUT', `The model did not answer within LLM_TIMEOUT_MS (${deps.config.LLM_TIMEOUT_MS} ms).`);
        throw new AppError(
          'UPSTREAM_UNAVAILABLE',
          `The chat endpoint at LLM_BASE_URL is unreachable (${(err as Error).message}); check that it runs.`,
        );
      }
      const body = (await res.json().catch(() => undefined)) as
        | {
            choices?: { message?: { content?: string }; finish_reason?: string }[];
            model?: string;
            usage?: Record<string, number>;
            error?: { message?: string };
          }
        | undefined;
      if (!res.ok || !body) {
        throw new AppError(
          'UPSTREAM_ERROR',
          `The chat endpoint answered HTTP ${res.status}${body?.error?.message ? `: ${body.error.message.slice(0, 300)}` : ''}.`,
        );
      }
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string')
        throw new AppError('UPSTREAM_ERROR', 'The chat endpoint answered without choices[0].message.content.');
      return {
        tool: spec.name,
        model: body.model ?? deps.config.LLM_MODEL,
        answer: content,
        finishReason: body.choices?.[0]?.finish_reason,
        usage: body.usage,
        contextFiles: context.map((c) => c.relative),
      };
    },
  });
}
