import { z } from 'zod';
import { actionInput, AppError, parseOrThrow, toolToJson, defineTool } from '../src';

// Model providers' tool APIs refuse an input schema with a top-level oneOf (what a discriminated
// union lists as), and clients drop such tools silently: actionInput lists one object instead.

const union = z
  .discriminatedUnion('action', [
    z
      .object({ action: z.literal('get'), key: z.string().min(1).describe('The key.') })
      .strict()
      .describe('get: read one key'),
    z
      .object({
        action: z.literal('set').describe('Write one key.'),
        key: z.string().min(1).describe('The key.'),
        value: z.json().describe('Any JSON value.'),
        ttl: z.number().positive().optional().describe('Seconds to live.'),
        nx: z.boolean().default(false).describe('Only when new.'),
      })
      .strict(),
    z
      .object({
        action: z.literal('delete'),
        keys: z.array(z.string()).min(1).describe('Keys to delete.'),
        ttl: z.literal(0).optional().describe('Must be 0 when given.'),
      })
      .strict(),
  ])
  .superRefine((v, ctx) => {
    if (v.action === 'set' && v.key === 'reserved') ctx.addIssue({ code: 'custom', path: ['key'], message: 'reserved' });
  });

const input = actionInput(union);
const tool = defineTool({
  name: 'kv',
  description: 'A key-value tool.',
  input,
  handler: (args) => (args.action === 'set' ? { nx: args.nx, key: args.key } : args.action),
});

describe('actionInput', () => {
  it('lists one plain object: the action an enum, each field once with the actions that take it', () => {
    const schema = toolToJson(tool).inputSchema as Record<string, any>;
    expect(schema).toMatchObject({ type: 'object', required: ['action'], additionalProperties: false });
    for (const k of ['oneOf', 'anyOf', 'allOf']) expect(schema[k]).toBeUndefined();
    expect(schema.properties.action).toEqual({
      type: 'string',
      enum: ['get', 'set', 'delete'],
      description: 'What to do: get | set | delete. get: read one key. set: Write one key.',
    });
    expect(schema.properties.key).toEqual({ type: 'string', minLength: 1, description: 'The key. For get, set (required).' });
    expect(schema.properties.nx).toEqual({ type: 'boolean', default: false, description: 'Only when new. For set.' });
    expect(schema.properties.keys.description).toBe('Keys to delete. For delete (required).');
    // another schema per action: both listed, each action's description named
    expect(schema.properties.ttl.anyOf).toEqual([
      { type: 'number', exclusiveMinimum: 0 },
      { type: 'number', const: 0 },
    ]);
    expect(schema.properties.ttl.description).toBe('set: Seconds to live. delete: Must be 0 when given. For set, delete.');
    // z.json()'s recursive definition moves to the top, where its $ref points
    expect(schema.properties.value.$ref).toBe('#/$defs/__schema0');
    expect(schema.$defs.__schema0.anyOf).toHaveLength(6);
  });

  it('validates as the union does: per-action required fields, strictness, defaults and refinements', () => {
    expect(parseOrThrow(input, { action: 'set', key: 'k', value: { a: [1] } })).toEqual({
      action: 'set',
      key: 'k',
      value: { a: [1] },
      nx: false,
    });
    expect(parseOrThrow(input, { action: 'delete', keys: ['a'] })).toEqual({ action: 'delete', keys: ['a'] });
    const failures: [unknown, string][] = [
      [{ action: 'get' }, 'key'],
      [{ action: 'get', key: 'k', nx: true }, '(root)'],
      [{ action: 'set', key: 'k' }, 'value'],
      [{ action: 'set', key: 'reserved', value: 1 }, 'key'],
      [{ action: 'delete', keys: [] }, 'keys'],
      [{ action: 'delete', keys: ['a'], ttl: 5 }, 'ttl'],
      [{ action: 'drop', key: 'k' }, 'action'],
      [{ key: 'k' }, 'action'],
      [{ action: 'get', key: 'k', other: 1 }, '(root)'],
    ];
    for (const [args, path] of failures) {
      let caught: unknown;
      try {
        parseOrThrow(input, args);
      } catch (err) {
        caught = err;
      }
      expect([args, caught instanceof AppError && caught.code]).toEqual([args, 'VALIDATION_ERROR']);
      expect([args, (caught as AppError).details]).toEqual([args, expect.arrayContaining([expect.objectContaining({ path })])]);
    }
  });

  it('keeps its behaviour nested inside another object', () => {
    const outer = z.object({ op: input });
    expect(outer.parse({ op: { action: 'set', key: 'k', value: 1 } })).toEqual({ op: { action: 'set', key: 'k', value: 1, nx: false } });
    const bad = outer.safeParse({ op: { action: 'get' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0].path).toEqual(['op', 'key']);
  });
});
