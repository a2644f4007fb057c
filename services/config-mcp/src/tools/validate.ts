import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type ConfigContext, loadDocument } from '../lib/context';
import { type ConfigFormat, formatSchema } from '../lib/formats';
import { yaml } from '../lib/lazy-modules';
import { draftOf } from '../lib/schema-worker';

const input = z
  .object({
    config: z.json().optional().describe('The configuration to check, as a JSON value.'),
    path: z.string().min(1).max(4096).optional().describe('Or: a config file inside the workspace roots (JSON, YAML, TOML or .env).'),
    format: formatSchema.optional().describe('Format of `path` when its name does not tell.'),
    schema: z
      .union([z.record(z.string(), z.json()), z.boolean()])
      .optional()
      .describe('The JSON Schema (draft 2020-12 by default; $schema may name draft-07 or 2019-09).'),
    schema_path: z.string().min(1).max(4096).optional().describe('Or: a schema file inside the workspace roots (JSON or YAML).'),
    maxErrors: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(100)
      .describe('Most errors returned (1-1000, default 100); more are counted and truncated.'),
  })
  .strict()
  .superRefine((args, ctx) => {
    if ((args.config === undefined) === (args.path === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['config'], message: 'give exactly one of config or path' });
    }
    if ((args.schema === undefined) === (args.schema_path === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'give exactly one of schema or schema_path' });
    }
  });

/** Line and column of the value at a JSON pointer, for YAML and JSON sources (JSON is YAML 1.2). */
function locator(text: string, format: ConfigFormat): ((pointer: string) => { line: number; column: number } | undefined) | undefined {
  if (format !== 'yaml' && format !== 'json') return undefined;
  const lineCounter = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, { lineCounter, keepSourceTokens: false });
  if (doc.errors.length > 0) return undefined;
  return (pointer) => {
    const segments =
      pointer === ''
        ? []
        : pointer
            .slice(1)
            .split('/')
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const keys = segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const node = keys.length === 0 ? doc.contents : doc.getIn(keys, true);
    const offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0];
    if (offset === undefined) return undefined;
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
}

export function validateTool(ctx: ConfigContext) {
  return defineTool({
    name: 'validate',
    title: 'Validate against JSON Schema',
    description:
      'Validate a configuration (inline JSON or a workspace file in JSON, YAML, TOML or .env) against a JSON Schema (inline or a workspace file; draft 2020-12 by default, draft-07 and 2019-09 via $schema; formats supported; remote $refs are not fetched). Reports every error with its JSON pointer, keyword, params and, for JSON and YAML files, line and column. Files over CONFIG_MAX_BYTES are refused; compile + validation is killed after VALIDATE_TIMEOUT_MS (default 2 s) so a catastrophic pattern cannot hang the service (at most 4 validations at once, then RATE_LIMITED); at most maxErrors (default 100) errors are returned.',
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, call) => {
      let schema: unknown = args.schema;
      if (args.schema_path !== undefined) {
        schema = (await loadDocument(ctx, { path: args.schema_path }, { path: 'schema_path', content: 'schema', format: 'schema_path' }))
          .data;
      }
      const draft = draftOf(schema);
      if (!draft) {
        throw new AppError('VALIDATION_ERROR', 'The schema names an unsupported $schema; use draft 2020-12, 2019-09 or draft-07.', {
          details: [{ path: 'schema.$schema', message: 'unsupported draft' }],
        });
      }

      let data: unknown = args.config;
      let locate: ReturnType<typeof locator>;
      let source: { path: string; format: ConfigFormat } | undefined;
      if (args.path !== undefined) {
        const doc = await loadDocument(
          ctx,
          { path: args.path, format: args.format },
          { path: 'path', content: 'config', format: 'format' },
        );
        data = doc.data;
        locate = locator(doc.text, doc.format);
        source = { path: doc.file!.relative, format: doc.format };
      }

      const outcome = await ctx.validator.validate({ schema, data, draft, maxErrors: args.maxErrors }, call.signal);
      const errors = outcome.errors.map((e) => ({ ...e, ...(locate?.(e.path) ?? {}) }));
      return {
        valid: outcome.valid,
        draft,
        ...(source ?? {}),
        errorCount: outcome.errorCount,
        errors,
        ...(outcome.errorCount > errors.length ? { truncated: true } : {}),
      };
    },
  });
}
