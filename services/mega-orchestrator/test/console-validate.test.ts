/**
 * The console's client-side argument check (console/validate.js) against Ajv (the gateway's own
 * JSON Schema validator) on schemas of the shapes tools use, the fleet's real schemas among them: it
 * says "valid" exactly when Ajv does, and names the place of each problem.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { z } from 'zod';
// plain ES module served to browsers (the console has no build step)
import { validate } from '../console/validate.js';

const ajv = new AjvJsonSchemaValidator();
const tripSchema = z.toJSONSchema(
  z
    .object({
      city: z.string().min(1).max(60),
      days: z.number().int().min(1).max(14),
      travel: z.enum(['train', 'bus']).optional(),
      stops: z.array(z.string().min(1)).max(3).optional(),
      budget: z.object({ amount: z.number().min(0), currency: z.enum(['EUR', 'USD']) }).optional(),
      code: z
        .string()
        .regex(/^[A-Z]{3}$/)
        .optional(),
      ratio: z.number().gt(0).lt(1).optional(),
      note: z.string().nullable().optional(),
      either: z.union([z.string(), z.number()]).optional(),
    })
    .strict(),
  { io: 'input' },
) as Record<string, unknown>;

const cases: [string, Record<string, unknown>, unknown][] = [
  ['good', tripSchema, { city: 'Lisbon', days: 5 }],
  [
    'all fields',
    tripSchema,
    {
      city: 'L',
      days: 1,
      travel: 'bus',
      stops: ['a'],
      budget: { amount: 0, currency: 'EUR' },
      code: 'ABC',
      ratio: 0.5,
      note: null,
      either: 3,
    },
  ],
  ['missing required', tripSchema, { days: 5 }],
  ['too many days', tripSchema, { city: 'L', days: 15 }],
  ['not whole', tripSchema, { city: 'L', days: 1.5 }],
  ['empty city', tripSchema, { city: '', days: 1 }],
  ['bad enum', tripSchema, { city: 'L', days: 1, travel: 'car' }],
  ['too many stops', tripSchema, { city: 'L', days: 1, stops: ['a', 'b', 'c', 'd'] }],
  ['empty stop', tripSchema, { city: 'L', days: 1, stops: [''] }],
  ['nested missing', tripSchema, { city: 'L', days: 1, budget: { amount: 1 } }],
  ['nested negative', tripSchema, { city: 'L', days: 1, budget: { amount: -1, currency: 'USD' } }],
  ['pattern', tripSchema, { city: 'L', days: 1, code: 'abc' }],
  ['exclusive bound', tripSchema, { city: 'L', days: 1, ratio: 1 }],
  ['unknown key', tripSchema, { city: 'L', days: 1, extra: true }],
  ['wrong type', tripSchema, { city: 5, days: '1' }],
  ['union', tripSchema, { city: 'L', days: 1, either: true }],
  ['emoji length', { type: 'object', properties: { s: { type: 'string', maxLength: 2 } } }, { s: '😀😀' }],
  ['ref', { $defs: { n: { type: 'integer', minimum: 3 } }, type: 'object', properties: { a: { $ref: '#/$defs/n' } } }, { a: 2 }],
  ['oneOf twice', { oneOf: [{ type: 'number' }, { type: 'integer' }] }, 3],
  ['uniqueItems', { type: 'array', uniqueItems: true }, [1, 1]],
  ['const', { const: 'x' }, 'y'],
  ['not', { not: { type: 'string' } }, 'x'],
  ['multipleOf', { type: 'number', multipleOf: 0.5 }, 1.25],
  ['minProperties', { type: 'object', minProperties: 1 }, {}],
  ['additional schema', { type: 'object', additionalProperties: { type: 'number' } }, { a: 'x' }],
];

describe('the console’s argument check agrees with Ajv', () => {
  it.each(cases)('%s', (_name, schema, value) => {
    const ours = validate(schema, value);
    expect(ours.length === 0).toBe(ajv.getValidator(schema as never)(value).valid);
  });

  it('names where each problem is', () => {
    const problems = validate(tripSchema, { days: 30, stops: ['', 'b'], budget: { amount: -1 }, extra: 1 });
    expect(problems.map((p) => p.path).sort()).toEqual(['budget.amount', 'budget.currency', 'city', 'days', 'extra', 'stops[0]']);
    expect(problems.find((p) => p.path === 'days')?.message).toBe('must be at most 14');
  });
});
