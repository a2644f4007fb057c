import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/test-support';
import { createLogger } from '../src';

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
});
