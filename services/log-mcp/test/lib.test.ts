import { detectAnomalies, messageShape } from '../src/lib/analysis';
import { matchesGlob } from '../src/lib/glob';
import { parseLine } from '../src/lib/parse-line';
import { scrubText } from '../src/lib/scrub';

describe('parseLine', () => {
  it('reads winston, pino and bunyan JSON lines', () => {
    const colored = JSON.stringify({
      level: '\u001b[31merror\u001b[39m',
      message: 'boom',
      service: 'x',
      timestamp: '2025-01-01T00:00:00.000Z',
    });
    expect(parseLine(colored)).toMatchObject({
      json: true,
      level: 'error',
      message: 'boom',
      service: 'x',
      time: Date.parse('2025-01-01T00:00:00Z'),
    });
    expect(parseLine('{"level":50,"time":1735689600000,"msg":"pino says","name":"svc"}')).toMatchObject({
      level: 'error',
      message: 'pino says',
      service: 'svc',
      time: 1735689600000,
    });
    expect(parseLine('{"level":"http","message":{"a":1},"ts":1735689600}')).toMatchObject({
      level: 'info',
      message: '{"a":1}',
      time: 1735689600000,
    });
    expect(parseLine('{"level":"verbose"}').level).toBe('debug');
    expect(parseLine('{"level":"silly"}').level).toBe('trace');
  });

  it('falls back to plain text for broken JSON and unknown words', () => {
    expect(parseLine('{not json')).toMatchObject({ json: false, message: '{not json' });
    expect(parseLine('2025-01-01T00:00:00Z LOUD something')).toMatchObject({
      level: undefined,
      message: 'LOUD something',
      time: Date.parse('2025-01-01T00:00:00Z'),
    });
    expect(parseLine('2025-01-01 00:00:00 UTC [critical] disk gone')).toMatchObject({ level: 'fatal', message: 'disk gone' });
    expect(parseLine('2025-01-01T00:00:00+0530 WARNING: hm').time).toBe(Date.parse('2024-12-31T18:30:00Z'));
  });
});

describe('scrubText', () => {
  it('redacts values after secret-looking keys, bearer tokens and URL passwords', () => {
    expect(scrubText('login user=bob password=hunter2 ok')).toBe('login user=bob password=[redacted] ok');
    expect(scrubText('{"api_key": "abc def", "x": 1}')).toBe('{"api_key": "[redacted]", "x": 1}');
    expect(scrubText("DB_PASSWORD='p w' next")).toBe("DB_PASSWORD='[redacted]' next");
    expect(scrubText('Authorization: Bearer eyJhbGciOi.payload.sig')).toBe('Authorization: [redacted] [redacted]');
    expect(scrubText('GET /cb?code=1&access_token=zzz&state=2')).toBe('GET /cb?code=1&access_token=[redacted]&state=2');
    expect(scrubText('redis://:r3dis@cache:6379 and https://u:p@h/x')).toBe('redis://:[redacted]@cache:6379 and https://u:[redacted]@h/x');
    expect(scrubText('basic authentication failed at http://example.com:8080/x')).toBe(
      'basic authentication failed at http://example.com:8080/x',
    );
  });

  it('handles hostile long lines', () => {
    const line = `${'password-'.repeat(20_000)}=x ${'a:'.repeat(20_000)}`;
    expect(scrubText(line)).toContain('[redacted]');
  });
});

describe('matchesGlob', () => {
  it('matches segments, ** and classes without regexes', () => {
    expect(matchesGlob('a/b/c.log', '**/*.log')).toBe(true);
    expect(matchesGlob('c.log', '**/*.log')).toBe(true);
    expect(matchesGlob('a/c.log', '*.log')).toBe(false);
    expect(matchesGlob('api.log.1', '*.log.[0-9]')).toBe(true);
    expect(matchesGlob('api.log.x', '*.log.[!0-9]')).toBe(true);
    expect(matchesGlob('x/y/z', 'x/?/z')).toBe(true);
    expect(matchesGlob(`${'a'.repeat(4000)}b`, `${'*a'.repeat(50)}*c`)).toBe(false);
  });
});

describe('messageShape', () => {
  it('replaces the varying parts of a message', () => {
    expect(
      messageShape(
        'user 42 (alice@example.com) hit https://x.io/a?b=1 from 192.168.1.20 id 3f2a8c1e-1d2b-4c3d-9e8f-001122334455 at 2025-01-01T00:00:00Z',
      ),
    ).toBe('user <n> (<email>) hit <url> from <ip> id <uuid> at <ts>');
    expect(messageShape("can't open '/etc/x' ptr 0xdeadbeef sha 9f86d081884c7d65")).toBe("can't open <str> ptr <hex> sha <hex>");
    expect(messageShape('')).toBe('(empty message)');
  });
});

describe('detectAnomalies', () => {
  const series = (errors: number[]) => errors.map((e, i) => ({ start: i * 60_000, total: 100, errors: e, warnings: 0 }));
  const opts = { minErrors: 5, sensitivity: 3, minRatio: 2 };

  it('flags nothing on a steady or noisy-but-flat series', () => {
    expect(detectAnomalies(series([3, 4, 5, 4, 3, 5, 4, 4, 3, 5]), 60_000, opts)).toEqual([]);
    expect(detectAnomalies(series([0, 0, 0, 0]), 60_000, opts)).toEqual([]);
    expect(detectAnomalies(series([50, 50]), 60_000, opts)).toEqual([]);
    expect(detectAnomalies(series([50, 52, 48, 55, 50, 47, 51]), 60_000, opts)).toEqual([]);
  });

  it('flags a jump over a busy baseline', () => {
    expect(detectAnomalies(series([50, 52, 48, 55, 50, 200, 51]), 60_000, opts)).toEqual([
      expect.objectContaining({ start: 5 * 60_000, buckets: 1, errors: 200, baselineErrorsPerBucket: 51, factor: 3.92 }),
    ]);
  });

  it('flags a jump and merges adjacent buckets', () => {
    const windows = detectAnomalies(series([1, 0, 1, 1, 0, 1, 20, 25, 1, 0, 1]), 60_000, opts);
    expect(windows).toEqual([
      expect.objectContaining({ start: 6 * 60_000, end: 8 * 60_000, buckets: 2, errors: 45, total: 200, errorRate: 0.225 }),
    ]);
  });
});
