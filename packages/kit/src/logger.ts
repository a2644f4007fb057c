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
  return skipDisabledLevels(
    winston.createLogger({
      level: options.level ?? 'info',
      defaultMeta: { service: options.service },
      format,
      transports,
      silent: options.silent ?? false,
    }),
  );
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
