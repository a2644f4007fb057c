import { z } from 'zod';
import { baseEnvShape, bool, ConfigError, csv, int, loadConfig, redact } from '../src';

const schema = z.object({ ...baseEnvShape, ROOTS: csv(['.']), SHELL_OK: bool(false), LIMIT: z.coerce.number().int().min(1) });

describe('loadConfig', () => {
  it('applies defaults and parses lists and booleans', () => {
    const c = loadConfig('t', schema, { ROOTS: 'a, b,,c', SHELL_OK: 'yes', LIMIT: '5' });
    expect(c).toMatchObject({ HOST: '127.0.0.1', ROOTS: ['a', 'b', 'c'], SHELL_OK: true, LIMIT: 5, BODY_LIMIT: '1mb' });
  });

  it('reads an empty value (FOO=, as compose and .env files write it) as unset, never as 0 or an error', () => {
    const withInt = z.object({ ...baseEnvShape, ON: bool(true), COUNT: int(7, 1, 10) });
    const c = loadConfig('t', withInt, { PORT: '', ON: '', COUNT: '', TOOL_TIMEOUT_MS: '', SHUTDOWN_TIMEOUT_MS: '' });
    expect(c).toMatchObject({ ON: true, COUNT: 7, TOOL_TIMEOUT_MS: 30_000, SHUTDOWN_TIMEOUT_MS: 10_000 });
    expect(c.PORT).toBeUndefined(); // not port 0, which would listen on a random port
    expect(() => loadConfig('t', withInt, { COUNT: '0' })).toThrow(/COUNT/);
    expect(loadConfig('t', withInt, { COUNT: ' 3 ', ON: 'off', PORT: '7001' })).toMatchObject({ COUNT: 3, ON: false, PORT: 7001 });
  });

  it('fails naming every bad variable at once', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig('svc', schema, { PORT: 'abc', LOG_LEVEL: 'loud', SHELL_OK: 'maybe', LIMIT: '0' });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems.map((p) => p.variable).sort()).toEqual(['LIMIT', 'LOG_LEVEL', 'PORT', 'SHELL_OK']);
    expect(err!.message).toMatch(/^svc: invalid configuration/);
  });
});

describe('redact', () => {
  it('replaces secret-looking values at any depth', () => {
    expect(redact({ user: 'a', password: 'p', nested: { apiKey: 'k', list: [{ token: 't', ok: 1 }] } })).toEqual({
      user: 'a',
      password: '[redacted]',
      nested: { apiKey: '[redacted]', list: [{ token: '[redacted]', ok: 1 }] },
    });
  });
});

describe('boundedJson', () => {
  it('accepts ordinary JSON and refuses hostile nesting without overflowing the stack', async () => {
    const { boundedJson, parseOrThrow } = await import('../src');
    const schema = z.object({ payload: boundedJson() });
    expect(parseOrThrow(schema, { payload: { a: [1, { b: null }] } })).toEqual({ payload: { a: [1, { b: null }] } });
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(() => parseOrThrow(schema, { payload: deep })).toThrow(/Invalid/);
  });
});
