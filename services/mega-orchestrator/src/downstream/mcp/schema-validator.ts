/**
 * The JSON Schema validator of the gateway's MCP server and of its clients of MCP servers: the
 * SDK's own (Ajv with its formats, as AjvJsonSchemaValidator makes it), whose messages go to the
 * gateway's structured log instead of the console. A server's schema that names a format Ajv does
 * not know (`"format": "x-custom"`) is its own affair: the format is ignored, and that is logged as
 * information with the server's id, not printed as a bare console line.
 */
import type { Logger } from '@mcp-fleet/kit';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const said = (args: unknown[]) => args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ');

const made = new WeakMap<Logger, jsonSchemaValidator>();

/** One validator per logger (the gateway's, or one MCP server's): its compiled schemas are kept for its connections. */
export function schemaValidator(logger: Logger): jsonSchemaValidator {
  const known = made.get(logger);
  if (known) return known;
  // the SDK's options (createDefaultAjvInstance): tolerant of what servers write, formats checked
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    logger: {
      log: (...args: unknown[]) => logger.debug(`JSON Schema: ${said(args)}`),
      warn: (...args: unknown[]) => logger.info(`JSON Schema: ${said(args)}`),
      error: (...args: unknown[]) => logger.warn(`JSON Schema: ${said(args)}`),
    },
  });
  addFormats(ajv);
  const validator = new AjvJsonSchemaValidator(ajv as unknown as ConstructorParameters<typeof AjvJsonSchemaValidator>[0]);
  made.set(logger, validator);
  return validator;
}
