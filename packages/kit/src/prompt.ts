import { z } from 'zod';
import { AppError } from './errors';
import type { Logger } from './logger';
import { TOOL_NAME } from './tool';

/**
 * Prompts served by a kit service (GET /prompts/list, POST /prompts/get): the MCP prompt shapes, so
 * the gateway federates them beside MCP servers' prompts without translating anything.
 */
export interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

export interface PromptListing {
  /** Matches ^[a-zA-Z0-9_-]{1,64}$ like tool names (others are left out of the list). */
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: 'text'; text: string };
}

export interface PromptResult {
  description?: string;
  messages: PromptMessage[];
}

export interface PromptContext {
  requestId: string;
  logger: Logger;
  signal: AbortSignal;
  authorization?: string;
}

/** A service's prompts; read on every request, so a source whose prompts change (skills) needs no hook. */
export interface PromptSource {
  list(): PromptListing[] | Promise<PromptListing[]>;
  /** Called with a listed name and checked arguments (every required one present, no undeclared one). */
  get(name: string, args: Record<string, string>, ctx: PromptContext): PromptResult | Promise<PromptResult>;
}

export const promptGetBody = z
  .object({
    name: z.string().min(1).max(64),
    arguments: z.record(z.string(), z.string().max(100_000)).optional().default({}),
  })
  .strict();

/** The listed prompts whose names are routable. */
export async function listPromptsOf(source: PromptSource): Promise<PromptListing[]> {
  return (await source.list()).filter((p) => TOOL_NAME.test(p.name));
}

/** prompts/get: unknown name -> NOT_FOUND; a missing required or an undeclared argument -> VALIDATION_ERROR. */
export async function getPromptOf(
  source: PromptSource,
  service: string,
  name: string,
  args: Record<string, string>,
  ctx: PromptContext,
): Promise<PromptResult> {
  const listing = (await listPromptsOf(source)).find((p) => p.name === name);
  if (!listing) throw new AppError('NOT_FOUND', `${service} has no prompt named "${name.slice(0, 64)}"; GET /prompts/list shows them.`);
  const declared = listing.arguments ?? [];
  const missing = declared.filter((a) => a.required && (args[a.name] === undefined || args[a.name] === ''));
  const unknown = Object.keys(args).filter((k) => !declared.some((a) => a.name === k));
  if (missing.length || unknown.length) {
    const names = declared.map((a) => `${a.name}${a.required ? '' : ' (optional)'}`).join(', ') || 'none';
    throw new AppError(
      'VALIDATION_ERROR',
      `Arguments for prompt ${name}: ${[
        ...missing.map((a) => `${a.name} is required`),
        ...unknown.map((k) => `${k.slice(0, 64)} is not one of its arguments`),
      ].join('; ')}. It takes: ${names}.`,
      {
        details: [
          ...missing.map((a) => ({ path: `arguments.${a.name}`, message: 'required' })),
          ...unknown.map((k) => ({ path: `arguments.${k.slice(0, 64)}`, message: 'not an argument of this prompt' })),
        ],
      },
    );
  }
  return source.get(name, args, ctx);
}
