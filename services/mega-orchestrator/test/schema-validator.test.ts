import { schemaValidator } from '../src/downstream/mcp/schema-validator';
import type { Logger } from '@mcp-fleet/kit';

describe('the JSON Schema validator of the gateway and its MCP clients', () => {
  const lines: string[] = [];
  const logger = {
    debug: (m: string) => lines.push(`debug ${m}`),
    info: (m: string) => lines.push(`info ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
    error: (m: string) => lines.push(`error ${m}`),
  } as unknown as Logger;

  it("logs what Ajv says about a server's schema to the gateway's log, never to the console, and still checks known formats", () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const validator = schemaValidator(logger);
      const check = validator.getValidator({
        type: 'object',
        properties: { at: { type: 'string', format: 'date-time' }, tag: { type: 'string', format: 'x-custom' } },
      });
      expect(check({ at: '2026-11-28T10:00:00Z', tag: 'anything' }).valid).toBe(true);
      expect(check({ at: 'yesterday', tag: 'anything' }).valid).toBe(false);
      expect(warn).not.toHaveBeenCalled();
      expect(log).not.toHaveBeenCalled();
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(/^info JSON Schema: unknown format "x-custom" ignored/);
      // one validator per logger: compiled schemas are kept across a server's connections
      expect(schemaValidator(logger)).toBe(validator);
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });
});
