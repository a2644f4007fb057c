/**
 * The three tools a client of the discovery mode sees instead of the catalog: search it by intent,
 * describe one tool, call one by name. Their JSON Schemas are generated from these zod schemas.
 */
import { z } from 'zod';
import type { ToolAnnotations } from '@mcp-fleet/kit';

export const SEARCH_TOOLS = 'search_tools';
export const DESCRIBE_TOOL = 'describe_tool';
export const CALL_TOOL = 'call_tool';
export const META_TOOL_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOLS, DESCRIBE_TOOL, CALL_TOOL]);

export const MAX_RESULTS = 25;
export const DEFAULT_RESULTS = 8;

const toolName = z.string().min(1).max(200);

export const searchInput = z
  .object({
    query: z.string().min(1).max(500).describe('What you want to do, in your own words ("show me the contents of README").'),
    limit: z.number().int().min(1).max(MAX_RESULTS).default(DEFAULT_RESULTS).describe(`How many tools to return (1-${MAX_RESULTS}).`),
  })
  .strict();

export const describeInput = z.object({ name: toolName.describe('A tool name from search_tools.') }).strict();

export const callInput = z
  .object({
    name: toolName.describe('The tool to run (a name from search_tools).'),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The tool's arguments, as its inputSchema (describe_tool) says; {} when it takes none."),
  })
  .strict();

interface MetaTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  annotations: ToolAnnotations;
}

const META_TOOLS: readonly MetaTool[] = [
  {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      "Finds the gateway's tools for a task described in plain words. Answers the best matches: name, one-line description and a score " +
      "(1 = the best match of this search). The catalog is large, so search first; then describe_tool shows a tool's arguments and call_tool runs it.",
    input: searchInput,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: DESCRIBE_TOOL,
    title: 'Describe a tool',
    description: "One tool's full description, input schema (its arguments) and annotations, by the name search_tools gave.",
    input: describeInput,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      "Runs one tool of the catalog by name with its arguments and answers that tool's own result, exactly as calling it directly would " +
      '(same checks, permissions and history).',
    input: callInput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
];

export interface MetaToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
}

/** The meta-tools as tools/list shows them (built once). */
export const META_TOOL_LISTING: readonly MetaToolListing[] = META_TOOLS.map((t) => {
  const inputSchema = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return { name: t.name, title: t.title, description: t.description, inputSchema, annotations: { title: t.title, ...t.annotations } };
});
