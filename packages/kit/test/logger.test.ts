import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/test-support';
import { closeLogger, createLogger } from '../src';

describe('createLogger', () => {
  it('writes JSON lines with service and timestamp, and never a secret value', async () => {
    const tmp = tempDir();
    const file = path.join(tmp.dir, 'svc.log');
    const logger = createLogger({ service: 'svc', file, level: 'debug' });
    logger.transports[0].silent = true; // keep the console quiet; the file transport is under test
    logger.info('connected', { url: 'postgres://db', password: 'hunter2', headers: { authorization: 'Bearer abc' } });
    logger.error('failed', { err: new Error('boom') });
    await new Promise<void>((resolve) => {
      logger.on('finish', () => resolve());
      logger.end();
    });
    await new Promise((r) => setTimeout(r, 50));
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      level: 'info',
      message: 'connected',
      service: 'svc',
      password: '[redacted]',
      headers: { authorization: '[redacted]' },
    });
    expect(new Date(lines[0].timestamp).getTime()).toBeGreaterThan(0);
    expect(lines[1].err).toMatchObject({ name: 'Error', message: 'boom' });
    expect(fs.readFileSync(file, 'utf8')).not.toMatch(/hunter2|Bearer abc/);
    tmp.cleanup();
  });

  it('builds no line below the level, and follows a level changed at run time (child loggers too)', () => {
    const logger = createLogger({ service: 'svc', level: 'info', silent: true });
    const child = logger.child({ request: 'r1' });
    let built = 0;
    const meta = {
      get detail() {
        built++;
        return 'x';
      },
    };
    logger.debug('dropped', meta);
    child.debug('dropped', meta);
    expect(built).toBe(0);
    logger.level = 'debug';
    expect(child.isLevelEnabled('debug')).toBe(true);
    child.debug('kept', meta);
    expect(built).toBeGreaterThan(0);
  });

  it('after closeLogger, a line (its own or a child logger\'s) goes redacted to stderr instead of throwing "write after end"', async () => {
    const tmp = tempDir();
    const file = path.join(tmp.dir, 'svc.log');
    const logger = createLogger({ service: 'svc', file });
    logger.transports[0].silent = true;
    const child = logger.child({ request: 'r1' });
    logger.info('svc stopped');
    await closeLogger(logger);
    await closeLogger(logger); // a second close changes nothing
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const errors: unknown[] = [];
    logger.on('error', (err) => errors.push(err));
    try {
      logger.error('late rejection', { err: new Error('boom'), token: 'hunter2' });
      child.warn('late child line');
      logger.debug('below the level');
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([]);
    const lines = written.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 'error',
      message: 'late rejection',
      service: 'svc',
      token: '[redacted]',
      err: { message: 'boom' },
    });
    expect(lines[1]).toMatchObject({ level: 'warn', message: 'late child line', service: 'svc', request: 'r1' });
    // the file got everything logged before the close, and nothing after it
    const fileLines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(fileLines.map((l) => JSON.parse(l).message)).toEqual(['svc stopped']);
    tmp.cleanup();
  });

  it('closeLogger loses no line still queued for the transports (winston alone ends them with lines waiting: "write after end")', async () => {
    const tmp = tempDir();
    const file = path.join(tmp.dir, 'svc.log');
    const logger = createLogger({ service: 'svc', file });
    logger.transports[0].silent = true;
    const errors: unknown[] = [];
    logger.on('error', (err) => errors.push(err));
    for (let i = 0; i < 20_000; i++) logger.info('tool call', { i });
    logger.info('svc stopped');
    await closeLogger(logger, 20_000);
    const messages = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(errors).toEqual([]);
    expect(messages).toHaveLength(20_001);
    expect(JSON.parse(messages.at(-1)!).message).toBe('svc stopped');
    tmp.cleanup();
  }, 30_000);
});
