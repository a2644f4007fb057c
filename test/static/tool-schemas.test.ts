/**
 * Every tool of every service lists an input schema that every model provider's tool API accepts
 * (issue 28 item 3): an object at the top with `properties`, no `oneOf`/`anyOf`/`allOf` (nor `not`,
 * `if`, `$ref`) at the top, and, at every depth, none of what MCP Inspector's `tools/list --strict`
 * reports: a schema that constrains nothing (`{}`, or only a description), a bare `true`/`false`
 * where a schema belongs, a `type` array, a `$ref` outside the document. Providers refuse the
 * first kind outright and clients drop such tools silently; the rest lose their constraint or the
 * tool in some clients. The schemas are the ones `/tools/list` serves (toolToJson of each built app).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES } from '@mcp-fleet/inventory';
import { toolToJson, type ToolDefinition } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { tempDir, testLogger } from '@mcp-fleet/testing';

const ROOT = path.resolve(__dirname, '../..');
const built = SERVICES.filter((s) => s.status === 'available' && s.pattern !== 'gateway');

type Schema = Record<string, unknown>;

/** Keywords whose presence makes a schema reject something (Inspector's list; `if` only with `then`/`else`). */
const CONSTRAINING = new Set(
  (
    'type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern format ' +
    'contentMediaType contentEncoding contentSchema maxItems minItems uniqueItems maxContains minContains maxProperties ' +
    'minProperties required dependentRequired allOf anyOf oneOf not items prefixItems contains additionalItems ' +
    'unevaluatedItems properties patternProperties additionalProperties unevaluatedProperties propertyNames ' +
    'dependentSchemas dependencies $ref $dynamicRef $recursiveRef'
  ).split(' '),
);
const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
const SUBSCHEMA = ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', ...BOOLEAN_VALUED, 'contentSchema'];
const SUBSCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];
const TOP_LEVEL_FORBIDDEN = ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$ref'];

const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The problems of one tool's input schema, as `path: problem` lines (empty when it is portable). */
export function schemaProblems(schema: Schema): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push(`(top): type is ${JSON.stringify(schema.type)}, not "object"`);
  if (!isRecord(schema.properties)) problems.push('(top): no properties');
  for (const k of TOP_LEVEL_FORBIDDEN) if (k in schema) problems.push(`(top): ${k} at the top level`);
  // iterative walk of every subschema, as Inspector's lint walks them
  const stack: { node: unknown; at: string; keyword?: string }[] = [{ node: schema, at: '' }];
  while (stack.length) {
    const { node, at, keyword } = stack.pop()!;
    if (typeof node === 'boolean') {
      if (!keyword || !BOOLEAN_VALUED.has(keyword)) problems.push(`${at}: bare ${node} where a schema belongs`);
      continue;
    }
    if (!isRecord(node)) continue;
    if (Array.isArray(node.type)) problems.push(`${at}: type is an array ${JSON.stringify(node.type)}`);
    if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) problems.push(`${at}: $ref outside the document`);
    const constrains = Object.keys(node).some((k) => CONSTRAINING.has(k)) || ('if' in node && ('then' in node || 'else' in node));
    if (!constrains && keyword !== 'not') problems.push(`${at || '(top)'}: constrains nothing (${JSON.stringify(node).slice(0, 80)})`);
    for (const k of SUBSCHEMA_MAPS) {
      if (isRecord(node[k]))
        for (const [name, sub] of Object.entries(node[k])) stack.push({ node: sub, at: `${at}.${k}.${name}`, keyword: k });
    }
    for (const k of SUBSCHEMA_ARRAYS) {
      if (Array.isArray(node[k])) (node[k] as unknown[]).forEach((sub, i) => stack.push({ node: sub, at: `${at}.${k}[${i}]`, keyword: k }));
    }
    for (const k of SUBSCHEMA) {
      if (!(k in node)) continue;
      const sub = node[k];
      if (k === 'items' && Array.isArray(sub)) sub.forEach((s, i) => stack.push({ node: s, at: `${at}.items[${i}]`, keyword: k }));
      else stack.push({ node: sub, at: `${at}.${k}`, keyword: k });
    }
  }
  return problems;
}

interface ServiceModule {
  createApp: (deps: { config: unknown; logger: ReturnType<typeof testLogger> }) => Promise<unknown>;
}
interface ConfigModule {
  readConfig: (env?: Record<string, string>) => unknown;
}
interface ToolsModule {
  createTools: (deps: unknown) => ToolDefinition[];
}

describe('tool input schemas every model API accepts', () => {
  const tmp = tempDir('mcp-fleet-schemas-');
  afterAll(() => tmp.cleanup());

  it('finds the rule-breakers it is meant to find', () => {
    const ok = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'object', additionalProperties: true } } };
    expect(schemaProblems(ok)).toEqual([]);
    expect(schemaProblems({ type: 'object', oneOf: [ok, ok] }).join('\n')).toMatch(/no properties[\s\S]*oneOf at the top level/);
    expect(schemaProblems({ type: 'object', properties: { a: {} } })).toEqual(['.properties.a: constrains nothing ({})']);
    expect(schemaProblems({ type: 'object', properties: { a: { description: 'anything' } } })[0]).toMatch(
      /^\.properties\.a: constrains nothing/,
    );
    expect(schemaProblems({ type: 'object', properties: { m: { type: 'object', additionalProperties: {} } } })).toEqual([
      '.properties.m.additionalProperties: constrains nothing ({})',
    ]);
    expect(schemaProblems({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, {}] } } })).toHaveLength(1);
    expect(schemaProblems({ type: 'object', properties: { a: { type: ['string', 'null'] } } })).toHaveLength(1);
    expect(schemaProblems({ type: 'object', properties: { a: true } })).toEqual(['.properties.a: bare true where a schema belongs']);
    expect(schemaProblems({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } })).toHaveLength(1);
    expect(schemaProblems({ anyOf: [ok] }).join('\n')).toMatch(/not "object"/);
  });

  it.each(built.map((s) => [s.id, s] as const))(
    '%s: every tool lists a portable input schema',
    async (id, entry) => {
      const dir = path.join(ROOT, 'services', id, 'src');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { readConfig } = require(path.join(dir, 'config.ts')) as ConfigModule;
      const data = path.join(tmp.dir, id);
      fs.mkdirSync(data, { recursive: true });
      const config = readConfig({ DATA_DIR: data, WORKSPACE_ROOTS: data, LOG_LEVEL: 'error', HOST: '127.0.0.1' });
      let tools: ToolDefinition[];
      let close = async () => undefined as unknown;
      if (entry.http) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { createApp } = require(path.join(dir, 'app.ts')) as ServiceModule;
        const svc = (await createApp({ config, logger: testLogger(id) })) as {
          tools: ReadonlyMap<string, ToolDefinition>;
          close(): Promise<void>;
        };
        tools = [...svc.tools.values()];
        close = () => svc.close();
      } else {
        // a stdio server (toolkit-mcp-server) lists what createTools builds
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { createTools } = require(path.join(dir, 'tools', 'index.ts')) as ToolsModule;
        tools = createTools({ config, ws: await Workspace.open([data]), logger: testLogger(id) });
      }
      try {
        expect(tools.map((t) => t.name).sort()).toEqual([...entry.tools].sort());
        const problems = tools.flatMap((t) => schemaProblems(toolToJson(t).inputSchema).map((p) => `${t.name} ${p}`));
        expect(problems).toEqual([]);
      } finally {
        await close();
      }
    },
    30_000,
  );
});
