import winston from 'winston';
import { LokiTransport } from './loki';

export type Logger = winston.Logger;

const SECRET_KEY = /(pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key)/i;
export const REDACTED = '[redacted]';

export function isSecretName(name: string): boolean {
  return SECRET_KEY.test(name);
}

/** Deep-copies a value, replacing the values of secret-looking keys. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Past this depth nothing is inspected, so nothing is passed on either.
  if (depth > 8) return '[redacted: nested too deeply]';
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretName(k) && v !== undefined && v !== null && v !== '' ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    const v = (info as Record<string, unknown>)[key];
    (info as Record<string, unknown>)[key] = isSecretName(key) && v ? REDACTED : redact(v);
  }
  return info;
});

const errorCause = winston.format((info) => {
  const err = (info as { err?: unknown }).err;
  if (err instanceof Error) {
    (info as Record<string, unknown>).err = { name: err.name, message: err.message, stack: err.stack };
  }
  return info;
});

export interface LoggerOptions {
  service: string;
  level?: string;
  file?: string;
  silent?: boolean;
  /** Also push the lines to Grafana Loki at this URL (LOKI_URL). */
  lokiUrl?: string;
}

export function createLogger(options: LoggerOptions): Logger {
  const format = winston.format.combine(winston.format.timestamp(), errorCause(), redactFormat(), winston.format.json());
  const transports: winston.transport[] = [new winston.transports.Console({ stderrLevels: ['error'] })];
  if (options.file) transports.push(new winston.transports.File({ filename: options.file }));
  if (options.lokiUrl) transports.push(new LokiTransport({ url: options.lokiUrl, labels: { job: 'mcp-fleet', service: options.service } }));
  const logger = winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format,
    transports,
    silent: options.silent ?? false,
  });
  // A transport that fails (a log file that cannot be written, Loki's stream) is reported, never an uncaught 'error'.
  logger.on('error', (err: Error) => process.stderr.write(`${options.service}: logging failed: ${err.message}\n`));
  return skipDisabledLevels(linesAfterEndToStderr(logger));
}

const MESSAGE = Symbol.for('message');

/**
 * A line logged after the logger was ended (closeLogger at shutdown) would make the stream throw
 * "write after end", an uncaught error that kills the process. Such a line (a rejection settling
 * while the process exits, a second signal) goes through the same format to stderr instead.
 * Child loggers write through their parent's write, so they are covered too.
 */
function linesAfterEndToStderr(logger: Logger): Logger {
  const write = logger.write;
  logger.write = function (this: Logger, info: winston.Logform.TransformableInfo, ...rest: unknown[]): boolean {
    if (!(this as unknown as { _writableState: { ending: boolean } })._writableState.ending)
      return (write as (...args: unknown[]) => boolean).call(this, info, ...rest);
    const line = this.silent ? false : this.format.transform({ ...info }, this.format.options);
    if (typeof line === 'object') process.stderr.write(`${String((line as Record<symbol, unknown>)[MESSAGE])}\n`);
    return true;
  } as typeof logger.write;
  return logger;
}

/**
 * Ends the logger once and resolves when every transport has written its lines (the file is
 * flushed, Loki pushed), or after `timeoutMs`. Lines logged afterwards go to stderr.
 */
export async function closeLogger(logger: Logger, timeoutMs = 2000): Promise<void> {
  const streams = logger as unknown as {
    _writableState: { length: number; ending: boolean; finished: boolean };
    _readableState: { length: number };
  };
  const written = streams._writableState;
  const deadline = Date.now() + timeoutMs;
  // winston's end ends its transports at once, even while lines still wait in its own buffers for
  // them (each of those would be lost as a "write after end"): let them reach the transports first.
  while ((written.length > 0 || streams._readableState.length > 0) && !written.ending && Date.now() < deadline)
    await new Promise((resolve) => setImmediate(resolve));
  if (written.finished) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    timer.unref();
    logger.once('finish', () => {
      clearTimeout(timer);
      resolve();
    });
    if (!written.ending) logger.end();
  });
}

/**
 * winston runs the whole format (timestamp, redaction, JSON) of every line before its transports
 * drop the lines below their level: a debug line on a hot path costs as much as a written one.
 * The level methods (and those of child loggers, which inherit them) return early instead when
 * no transport would write the line; the level can still be changed at run time.
 */
function skipDisabledLevels(logger: Logger): Logger {
  const methods = logger as unknown as Record<string, (...args: unknown[]) => Logger>;
  for (const level of Object.keys(logger.levels)) {
    const write = methods[level];
    if (typeof write !== 'function') continue;
    methods[level] = function (this: Logger | undefined, ...args: unknown[]) {
      const self = this ?? logger;
      return self.isLevelEnabled(level) ? write.apply(self, args) : self;
    };
  }
  return logger;
}

/**
 * [start, end) ranges of the passwords in `scheme://user:password@host` inside any text. Scans with
 * indexOf rather than a regex, so a hostile value cannot make it backtrack.
 */
export function urlPasswordRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  let from = 0;
  for (;;) {
    const sep = text.indexOf('://', from);
    if (sep < 0) break;
    const start = sep + 3;
    let end = start;
    while (end < text.length && end - start < 1024 && !'/ \t\r\n?#"\''.includes(text[end])) end++;
    const authority = text.slice(start, end);
    const at = authority.lastIndexOf('@');
    const colon = at > 0 ? authority.indexOf(':') : -1;
    if (at > 0 && colon >= 0 && colon < at) out.push([start + colon + 1, start + at]);
    from = end > start ? end : start;
  }
  return out;
}

/** The text with every URL password replaced by [redacted]. */
export function scrubUrlCredentials(text: string): string {
  let out = '';
  let from = 0;
  for (const [start, end] of urlPasswordRanges(text)) {
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}
