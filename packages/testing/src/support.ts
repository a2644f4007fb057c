import selfsigned from 'selfsigned';
import { createLogger, type Logger } from '@mcp-fleet/kit';

/** A real kit logger at debug level whose formatted lines are kept in memory (console output silenced). */
export function captureLogger(service: string): { logger: Logger; lines: string[] } {
  const logger = createLogger({ service, level: 'debug' });
  for (const t of logger.transports) t.silent = true;
  const lines: string[] = [];
  logger.on('data', (info: Record<string | symbol, unknown>) => {
    lines.push(String(info[Symbol.for('message')] ?? JSON.stringify(info)));
  });
  return { logger, lines };
}

/** A self-signed certificate for localhost and 127.0.0.1, made by the test. */
export function localhostCert(days = 30): { key: string; cert: string } {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    days,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * Watches a stream read chunk by chunk for `marker` (a process's "ready" line): true for the chunk
 * that completes its first appearance, false before and after. Each chunk is looked at with the end
 * of the one before it (the marker may be split between two), never everything read so far: a
 * fleet's launcher relays every service's log lines, and joining all of them on each chunk cost the
 * sweep of test/security/hostile-arguments.test.ts 166 s of CPU.
 */
export function markerWatch(marker: string): (chunk: string) => boolean {
  let tail = '';
  let seen = false;
  return (chunk) => {
    if (seen) return false;
    const text = tail + chunk;
    seen = text.includes(marker);
    tail = marker.length > 1 ? text.slice(1 - marker.length) : '';
    return seen;
  };
}
