import { AppError, defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type ConfigContext } from '../lib/context';
import { REDACTED, scrubUrlCredentials } from '../lib/secrets';

const VAR_NAME = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _, not starting with a digit');
const MAX_VALUE_CHARS = 4096;

const ruleSchema = z
  .object({
    type: z
      .enum(['string', 'integer', 'number', 'boolean'])
      .optional()
      .describe('Type the value must parse as (booleans: true/false/1/0/yes/no/on/off).'),
    format: z
      .enum(['uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'date-time', 'duration'])
      .optional()
      .describe('A JSON Schema format the value must satisfy.'),
    pattern: z
      .string()
      .max(500)
      .optional()
      .describe('Regular expression the value must match. Not allowed on secret or non-allowlisted variables.'),
    enum: z
      .array(z.string().max(1000))
      .min(1)
      .max(200)
      .optional()
      .describe('Allowed values. Not allowed on secret or non-allowlisted variables.'),
    minLength: z.number().int().min(0).max(1_000_000).optional().describe('Shortest allowed value.'),
    maxLength: z.number().int().min(0).max(1_000_000).optional().describe('Longest allowed value.'),
    minimum: z.number().optional().describe('Smallest allowed number (with type integer or number).'),
    maximum: z.number().optional().describe('Largest allowed number (with type integer or number).'),
    description: z.string().max(1000).optional().describe('What the variable is for (ignored by the check).'),
  })
  .strict();

const envSchemaShape = z
  .object({
    required: z.array(VAR_NAME).max(500).default([]).describe('Variables that must be set to a non-empty value.'),
    properties: z.record(VAR_NAME, ruleSchema).default({}).describe('Rules per variable, checked when the variable is set.'),
  })
  .strict();

const input = z
  .object({
    action: z
      .enum(['list', 'get', 'validate'])
      .default('list')
      .describe('list: allowlisted variables; get: the named ones; validate: check variables against `schema`.'),
    prefix: z
      .string()
      .max(256)
      .regex(/^[A-Za-z0-9_]*$/, 'letters, digits and _')
      .optional()
      .describe('list: only names starting with this (case-sensitive), within the allowlist.'),
    names: z.array(VAR_NAME).min(1).max(200).optional().describe('get: the variables to show (1-200).'),
    schema: envSchemaShape
      .optional()
      .describe('validate: {required: [NAME...], properties: {NAME: {type, format, pattern, enum, minLength, ...}}}.'),
    ...pageShape,
  })
  .strict()
  .superRefine((args, ctx) => {
    if (args.action === 'get' && !args.names) ctx.addIssue({ code: 'custom', path: ['names'], message: 'action "get" needs names' });
    if (args.action === 'validate' && !args.schema)
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'action "validate" needs schema' });
    if (args.action !== 'get' && args.names)
      ctx.addIssue({ code: 'custom', path: ['names'], message: 'names is used only by action "get"' });
    if (args.action !== 'validate' && args.schema)
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'schema is used only by action "validate"' });
  });

const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
  on: true,
  off: false,
};
const TEXT_RULES = ['format', 'pattern', 'enum', 'minLength', 'maxLength'] as const;
const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function envVarsTool(ctx: ConfigContext) {
  const allowed = (name: string) => ctx.config.ENV_ALLOWED_PREFIXES.some((p) => name.startsWith(p));

  /** The value as shown: secrets replaced, URL passwords scrubbed, long values cut. */
  const show = (name: string, value: string) => {
    if (ctx.secrets.isSecret(name)) return { name, value: REDACTED, redacted: true };
    const scrubbed = scrubUrlCredentials(value);
    const cut = scrubbed.length > MAX_VALUE_CHARS;
    return {
      name,
      value: cut ? scrubbed.slice(0, MAX_VALUE_CHARS) : scrubbed,
      redacted: scrubbed !== value,
      ...(cut ? { truncated: true } : {}),
    };
  };

  return defineTool({
    name: 'env_vars',
    title: 'Environment variables',
    description:
      'Inspect or validate the service environment. list: variables whose names start with an allowlisted prefix (ENV_ALLOWED_PREFIXES), paginated (limit 1-500, default 50); get: up to 200 named variables; validate: check required variables and per-variable rules (type, format, pattern, enum, lengths, range) and report each problem without echoing values. Values of secret-looking names are always "[redacted]", URL passwords are scrubbed, values are cut at 4096 characters. Validation runs under a hard time limit (VALIDATE_TIMEOUT_MS).',
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, call) => {
      const env = ctx.environment;
      if (args.action === 'list') {
        const names = Object.keys(env)
          .filter((n) => env[n] !== undefined && allowed(n) && (!args.prefix || n.startsWith(args.prefix)))
          .sort();
        const page = paginate(names, args.limit, args.cursor);
        return {
          variables: page.items.map((n) => show(n, env[n] ?? '')),
          total: page.total,
          allowedPrefixes: ctx.config.ENV_ALLOWED_PREFIXES,
          ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        };
      }

      if (args.action === 'get') {
        return {
          variables: args.names!.map((n) => {
            if (!allowed(n)) return { name: n, allowed: false };
            const value = env[n];
            return value === undefined ? { name: n, allowed: true, set: false } : { allowed: true, set: true, ...show(n, value) };
          }),
          allowedPrefixes: ctx.config.ENV_ALLOWED_PREFIXES,
        };
      }

      const schema = args.schema!;
      // Value rules on a secret would turn validate into an oracle (guess the value one pattern at a time).
      const refused: { path: string; message: string }[] = [];
      for (const [name, rule] of Object.entries(schema.properties)) {
        if (ctx.secrets.isSecret(name) || !allowed(name)) {
          for (const key of ['pattern', 'enum'] as const) {
            if (rule[key] !== undefined) {
              refused.push({
                path: `schema.properties.${name}.${key}`,
                message: `${key} cannot be checked on ${ctx.secrets.isSecret(name) ? 'a secret' : 'a non-allowlisted'} variable; use required, type, format or length rules`,
              });
            }
          }
        }
      }
      if (refused.length > 0) {
        throw new AppError('VALIDATION_ERROR', `${refused[0].path}: ${refused[0].message}.`, { details: refused });
      }

      const names = [...new Set([...schema.required, ...Object.keys(schema.properties)])].sort();
      const problems: { name: string; problem: 'missing' | 'invalid'; keyword: string; message: string }[] = [];
      const invalid = (name: string, keyword: string, message: string) => problems.push({ name, problem: 'invalid', keyword, message });
      // Type and range are checked here; text rules (format, pattern, enum, lengths) by JSON Schema in the bounded worker.
      const data: Record<string, string> = {};
      const properties: Record<string, Record<string, unknown>> = {};
      for (const name of names) {
        const value = env[name];
        if (value === undefined || value === '') {
          if (schema.required.includes(name))
            problems.push({ name, problem: 'missing', keyword: 'required', message: 'is not set (or is empty)' });
          continue;
        }
        const rule = schema.properties[name];
        if (!rule) continue;
        if (rule.type === 'boolean' && BOOLEAN_WORDS[value.trim().toLowerCase()] === undefined) {
          invalid(name, 'type', 'must be a boolean (true/false, 1/0, yes/no, on/off)');
        }
        if (rule.type === 'integer' || rule.type === 'number') {
          const n = Number(value.trim());
          if (!NUMERIC.test(value.trim()) || (rule.type === 'integer' && !Number.isInteger(n))) {
            invalid(name, 'type', `must be ${rule.type === 'integer' ? 'an integer' : 'a number'}`);
          } else {
            if (rule.minimum !== undefined && n < rule.minimum) invalid(name, 'minimum', `must be >= ${rule.minimum}`);
            if (rule.maximum !== undefined && n > rule.maximum) invalid(name, 'maximum', `must be <= ${rule.maximum}`);
          }
        }
        const textRules = Object.fromEntries(TEXT_RULES.filter((k) => rule[k] !== undefined).map((k) => [k, rule[k]]));
        if (Object.keys(textRules).length > 0) {
          data[name] = value;
          properties[name] = { type: 'string', ...textRules };
        }
      }

      if (Object.keys(properties).length > 0) {
        const outcome = await ctx.validator.validate(
          { schema: { type: 'object', properties }, data, draft: '2020-12', maxErrors: 1000 },
          call.signal,
        );
        for (const e of outcome.errors) invalid(e.path.slice(1), e.keyword, e.message);
      }
      problems.sort((a, b) => a.name.localeCompare(b.name));
      return { valid: problems.length === 0, checked: names.length, problems };
    },
  });
}
