/**
 * Regression: a terminal's Ctrl-C reaches every process of the group and the launcher then sends
 * SIGTERM, so a service gets SIGINT and SIGTERM together (twice, if Ctrl-C is pressed again). It
 * used to stop twice and die on an uncaught "write after end" from its logger.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/test-support';

const fixture = path.join(__dirname, 'fixtures', 'signal-service.ts');

async function runAndSignal(
  signals: NodeJS.Signals[][],
  when = 'signal-test listening',
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null; output: string; log: any[] }> {
  const tmp = tempDir('kit-signals-');
  const logFile = path.join(tmp.dir, 'service.log');
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, LOG_FILE: logFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<[number | null, string | null]>((resolve) => child.on('exit', (code, signal) => resolve([code, signal])));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${when}" in time:\n${output}`)), 20_000);
    const check = () => {
      if (output.includes(when)) {
        clearTimeout(timer);
        resolve();
      } else setTimeout(check, 50);
    };
    check();
  });
  // Each group of signals is sent at once; the groups 50 ms apart (while the service is stopping).
  for (const [i, group] of signals.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    for (const s of group) child.kill(s);
  }
  const [code, signal] = await exited;
  const text = fs.readFileSync(logFile, 'utf8');
  if (!text.trim()) throw new Error(`empty log; exit ${code} ${signal}; output:\n${output}`);
  const log = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  tmp.cleanup();
  return { code, signal, output, log };
}

describe('a kit service stopped by several signals', () => {
  it.each([
    ['SIGINT and SIGTERM together', [['SIGINT', 'SIGTERM']]],
    [
      'SIGTERM and SIGINT together, then both again while it stops',
      [
        ['SIGTERM', 'SIGINT'],
        ['SIGINT', 'SIGTERM'],
      ],
    ],
    ['SIGINT, then SIGINT again while it stops', [['SIGINT'], ['SIGINT']]],
  ] as [string, NodeJS.Signals[][]][])('%s: shuts down once, flushes its log and exits 0', async (_name, signals) => {
    const { code, signal, output, log } = await runAndSignal(signals);
    expect(output).not.toMatch(/write after end|Unhandled|uncaught|Error/i);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const messages = log.map((l) => l.message);
    expect(messages.filter((m) => m === 'signal-test stopping')).toHaveLength(1);
    expect(messages.filter((m) => m === 'signal-test closing its resources')).toHaveLength(1);
    // with both pending, the kernel delivers the lower-numbered one first: either of the first group
    expect(signals[0]).toContain(log.find((l) => l.message === 'signal-test stopping').signal);
    // the file ends with the shutdown line: everything was written before the process exited
    expect(messages.at(-1)).toBe('signal-test stopped');
  });

  it('signalled while it starts (before it listens): it still starts, then stops once and exits 0', async () => {
    const { code, signal, output, log } = await runAndSignal([['SIGINT', 'SIGTERM']], 'signal-test creating its app', {
      SLOW_START_MS: '300',
    });
    expect(output).not.toMatch(/write after end|Unhandled|uncaught|Error/i);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const messages = log.map((l) => l.message);
    expect(messages).toEqual(['signal-test listening', 'signal-test stopping', 'signal-test closing its resources', 'signal-test stopped']);
  });
});
