/**
 * Virtual servers (issue 30, part 1): what a definition says, checked once at the edge. A file
 * (VIRTUAL_SERVERS_FILE, YAML or JSON: JSON is read by the YAML parser too, so both get line
 * numbers) holds them under `servers`; the admin API sends one server's definition as JSON.
 *
 *   servers:
 *     research:
 *       description: What the research agent may use.
 *       tools:
 *         - system_info                        # the gateway's name, plain or <service-id>__<tool>
 *         - tool: filesystem-mcp__read_file
 *           name: read_project_file            # the name its clients call
 *           description: Read one file of the project.
 *           fixed: { root: /srv/project }      # hidden from the schema, refused from callers
 *           defaults: { encoding: utf8 }       # filled in when absent, shown as `default`
 */
import YAML, { isMap, isScalar, isSeq, LineCounter, type Document, type Node } from 'yaml';
import { z } from 'zod';
import { TOOL_NAME } from '@mcp-fleet/kit';

/** A virtual server's name: its path segment (/servers/{name}/mcp) and its scope (server:{name}). */
export const SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** A backing tool as the gateway names it: plain, or <service-id>__<tool> (longer than a listed name may be). */
const SOURCE_NAME = /^[a-zA-Z0-9_-]{1,200}$/;
/** An argument that may be fixed or defaulted: a top-level property name. */
const ARGUMENT_NAME = /^[a-zA-Z0-9_$.-]{1,64}$/;
/** Property names that would reach an object's prototype when assigned. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_VALUES_BYTES = 64 * 1024;

const values = (what: 'fixed' | 'defaults') =>
  z
    .preprocess(
      (raw, c) => {
        // on the raw keys: a record's parse drops __proto__ silently
        if (raw !== null && typeof raw === 'object' && !Array.isArray(raw))
          for (const key of Object.keys(raw))
            if (!ARGUMENT_NAME.test(key) || UNSAFE_KEYS.has(key))
              c.addIssue({
                code: 'custom',
                path: [key],
                message: `"${key.slice(0, 80)}" is not an argument name (1-64 letters, digits, _ $ . -)`,
              });
        return raw;
      },
      z
        .record(z.string(), z.json({ error: 'a JSON value (string, number, boolean, null, array or object)' }))
        .refine(
          (record) => JSON.stringify(record).length <= MAX_VALUES_BYTES,
          `${what} values take more than ${MAX_VALUES_BYTES} bytes as JSON`,
        ),
    )
    .optional()
    .describe(
      what === 'fixed'
        ? 'Arguments set by the server on every call: left out of the schema its clients see; a call that sends one is refused (VALIDATION_ERROR).'
        : 'Arguments filled in when a call leaves them out; shown in the schema as `default`.',
    );

const toolObject = z
  .object({
    tool: z
      .string()
      .regex(SOURCE_NAME, 'the backing tool as the gateway names it: plain (echo) or <service-id>__<tool>')
      .describe('The backing tool, as GET /tools/list names it (plain), or <service-id>__<tool> to pin one service.'),
    name: z
      .string()
      .regex(TOOL_NAME, 'a tool name: 1-64 letters, digits, _ or -')
      .optional()
      .describe('The name its clients call (default: `tool`).'),
    title: z.string().min(1).max(200).optional().describe('A title instead of the backing tool’s.'),
    description: z.string().min(1).max(8192).optional().describe('A description instead of the backing tool’s.'),
    fixed: values('fixed'),
    defaults: values('defaults'),
  })
  .strict();

/** One tool of a virtual server; a bare string is `{tool: <string>}`. */
export const virtualToolSchema = z.preprocess((v) => (typeof v === 'string' ? { tool: v } : v), toolObject);

export const virtualServerSchema = z
  .object({
    description: z.string().max(2000).optional().describe('What the server is for (shown in GET /services and the admin API).'),
    discovery: z
      .enum(['full', 'meta'])
      .optional()
      .describe(
        'full (default): tools/list answers its tools. meta: search_tools, describe_tool and call_tool over its tools only (docs/gateway.md).',
      ),
    tools: z.array(virtualToolSchema).max(1000).describe('The tools it exposes, in the order its clients see them.'),
  })
  .strict()
  .superRefine((server, c) => {
    const names = new Map<string, number>();
    server.tools.forEach((t, i) => {
      const name = t.name ?? t.tool;
      if (!TOOL_NAME.test(name))
        c.addIssue({
          code: 'custom',
          path: ['tools', i, 'tool'],
          message: `"${name.slice(0, 80)}" is longer than 64 characters: give it a name`,
        });
      const first = names.get(name);
      if (first !== undefined)
        c.addIssue({
          code: 'custom',
          path: ['tools', i],
          message: `two tools are named "${name}" (the other is tools[${first}]); rename one`,
        });
      else names.set(name, i);
      for (const key of Object.keys(t.fixed ?? {}))
        if (t.defaults && Object.hasOwn(t.defaults, key))
          c.addIssue({ code: 'custom', path: ['tools', i, 'defaults', key], message: `"${key}" is fixed and defaulted; keep one` });
    });
  });

export type VirtualToolDef = z.output<typeof toolObject>;
export type VirtualServerDef = z.output<typeof virtualServerSchema>;

const fileSchema = z
  .object({
    servers: z.record(z.string(), virtualServerSchema).default({}).describe('Virtual servers by name.'),
  })
  .strict()
  .superRefine((doc, c) => {
    for (const name of Object.keys(doc.servers))
      if (!SERVER_NAME.test(name))
        c.addIssue({
          code: 'custom',
          path: ['servers', name],
          message: `"${name.slice(0, 80)}" is not a server name (1-40 lower-case letters, digits, -)`,
        });
  });

/** A definition file read: its servers, or why it was refused (with the line, when one is to blame). */
export type ParsedDefinitions = { ok: true; servers: Map<string, VirtualServerDef> } | { ok: false; error: string; line?: number };

const trimmed = (message: string) => message.split('\n')[0].slice(0, 300);

/** Reads a definition file's text (YAML or JSON). Empty text: no servers. */
export function parseDefinitions(text: string, file: string): ParsedDefinitions {
  const lines = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const bad = doc.errors[0];
  if (bad) {
    const line = bad.linePos?.[0].line;
    const message = trimmed(bad.message).replace(/ at line \d+, column \d+:?$/, '');
    return { ok: false, line, error: `${file}${line ? `: line ${line}` : ''}: ${message}` };
  }
  const parsed = fileSchema.safeParse(doc.toJS() ?? {});
  if (parsed.success) return { ok: true, servers: new Map(Object.entries(parsed.data.servers)) };
  const issue = parsed.error.issues[0];
  const at = issue.path.map(String);
  // an unknown key is blamed on its own line, not its object's
  const keys = issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : [];
  const line = lineOf(doc, lines, [...issue.path, ...keys]);
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
  return {
    ok: false,
    line,
    error: `${file}${line ? `: line ${line}` : ''}: ${at.length ? `${at.join('.')}: ` : ''}${trimmed(issue.message)}${more}`,
  };
}

/** The line of the deepest node of `path` that the document has (a missing key: its parent's line). */
function lineOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): number | undefined {
  let node: unknown = doc.contents;
  let start = (doc.contents as Node | null)?.range?.[0];
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === segment);
      if (!pair) break;
      start = (pair.key as Node | null)?.range?.[0] ?? start;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment]) {
      node = node.items[segment];
      start = (node as Node).range?.[0] ?? start;
    } else break;
  }
  return start === undefined ? undefined : lines.linePos(start).line;
}

/**
 * The file's text with one server set (or removed, `def` undefined), in the file's own format: a
 * JSON file is written as JSON; YAML keeps its comments and the other servers as they were.
 */
export function withServer(text: string, file: string, name: string, def: VirtualServerDef | undefined): string {
  const doc = YAML.parseDocument(text) as unknown as Document;
  const current = (doc.toJS() ?? {}) as { servers?: Record<string, unknown> };
  if (/\.json$/i.test(file)) {
    const servers = { ...(current.servers ?? {}) };
    if (def) servers[name] = def;
    else delete servers[name];
    return `${JSON.stringify({ ...current, servers }, null, 2)}\n`;
  }
  if (!isMap(doc.contents)) doc.contents = doc.createNode({ servers: {} });
  if (!isMap(doc.get('servers', true))) doc.set('servers', doc.createNode({}));
  if (def) doc.setIn(['servers', name], doc.createNode(def));
  else doc.deleteIn(['servers', name]);
  return doc.toString();
}
