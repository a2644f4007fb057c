/** Levels every log line is normalised to, most severe first. */
export const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type Level = (typeof LEVELS)[number];

export const SEVERITY: Record<Level, number> = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

const LEVEL_WORDS: Record<string, Level> = {
  fatal: 'fatal',
  critical: 'fatal',
  crit: 'fatal',
  emerg: 'fatal',
  emergency: 'fatal',
  alert: 'fatal',
  panic: 'fatal',
  error: 'error',
  err: 'error',
  severe: 'error',
  warn: 'warn',
  warning: 'warn',
  info: 'info',
  information: 'info',
  notice: 'info',
  http: 'info',
  debug: 'debug',
  verbose: 'debug',
  fine: 'debug',
  trace: 'trace',
  silly: 'trace',
  finest: 'trace',
};

/** pino / bunyan numeric levels. */
function numericLevel(n: number): Level | undefined {
  if (n >= 60) return 'fatal';
  if (n >= 50) return 'error';
  if (n >= 40) return 'warn';
  if (n >= 30) return 'info';
  if (n >= 20) return 'debug';
  if (n >= 10) return 'trace';
  return undefined;
}

// eslint-disable-next-line no-control-regex -- ANSI colour escapes start with ESC
const ANSI = /\u001b\[[0-9;]*m/g;

export function normaliseLevel(value: unknown): Level | undefined {
  if (typeof value === 'number') return numericLevel(value);
  if (typeof value !== 'string') return undefined;
  // winston's colorize wraps the level in ANSI escapes
  const word = value.replace(ANSI, '').trim().toLowerCase();
  return LEVEL_WORDS[word] ?? (/^\d+$/.test(word) ? numericLevel(Number(word)) : undefined);
}

export interface ParsedLine {
  json: boolean;
  /** Epoch milliseconds, when the line has a readable timestamp. */
  time?: number;
  level?: Level;
  service?: string;
  message: string;
  /** The parsed JSON object (JSON lines only). */
  object?: Record<string, unknown>;
}

function parseTime(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) {
    // seconds (e.g. Python's time.time()) or milliseconds
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value !== 'string' || value.length > 64) return undefined;
  return parseIsoish(value);
}

const ISO_START = /^\[?(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)(Z|[+-]\d{2}:?\d{2}| ?UTC)?\]?/;

/** ISO 8601 and its common log variants; no zone means UTC. */
function parseIsoish(text: string): number | undefined {
  const m = ISO_START.exec(text);
  if (!m) {
    const t = Date.parse(text);
    return Number.isNaN(t) ? undefined : t;
  }
  let zone = m[3]?.trim() ?? 'Z';
  if (zone === 'UTC') zone = 'Z';
  if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const frac = m[2].replace(',', '.');
  const t = Date.parse(`${m[1]}T${frac.length > 12 ? frac.slice(0, 12) : frac}${zone}`);
  return Number.isNaN(t) ? undefined : t;
}

const TIME_KEYS = ['timestamp', 'time', 'ts', '@timestamp', 'date'];
const MESSAGE_KEYS = ['message', 'msg', 'text', 'event'];
const LEVEL_KEYS = ['level', 'severity', 'lvl', 'loglevel', 'log.level'];

function parseJsonLine(text: string): ParsedLine | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const o = obj as Record<string, unknown>;
  const timeKey = TIME_KEYS.find((k) => o[k] !== undefined);
  const msgKey = MESSAGE_KEYS.find((k) => o[k] !== undefined);
  const levelKey = LEVEL_KEYS.find((k) => o[k] !== undefined);
  const rawMessage = msgKey ? o[msgKey] : undefined;
  return {
    json: true,
    time: timeKey ? parseTime(o[timeKey]) : undefined,
    level: levelKey ? normaliseLevel(o[levelKey]) : undefined,
    service: typeof o.service === 'string' ? o.service : typeof o.name === 'string' ? o.name : undefined,
    message: typeof rawMessage === 'string' ? rawMessage : rawMessage === undefined ? '' : JSON.stringify(rawMessage),
    object: o,
  };
}

const LEADING_LEVEL = /^[[(<]?([A-Za-z]{3,11})[\])>]?(?::|\s|$)/;
const LOGFMT_LEVEL = /(?:^|\s)(?:level|lvl|severity)=("?)([A-Za-z]{3,11})\1(?=\s|$)/;
const LOGFMT_MSG = /(?:^|\s)msg=(?:"((?:[^"\\]|\\.){0,2000})"|(\S{1,2000}))/;
const LOGFMT_TIME = /(?:^|\s)(?:time|ts|timestamp)=("?)([0-9T:.,+Z -]{10,40})\1(?=\s|$)/;

/** A plain text line: "<ISO timestamp> [LEVEL] message", "LEVEL <timestamp> message" or logfmt. */
function parsePlainLine(text: string): ParsedLine {
  let rest = text;
  let time: number | undefined;
  let level: Level | undefined;
  const readTime = () => {
    const m = ISO_START.exec(rest);
    if (m) {
      time = parseIsoish(m[0]);
      rest = rest.slice(m[0].length).trimStart();
    }
  };
  const readLevel = () => {
    const m = LEADING_LEVEL.exec(rest);
    const l = m ? LEVEL_WORDS[m[1].toLowerCase()] : undefined;
    if (m && l) {
      level = l;
      rest = rest.slice(m[0].length).trimStart();
      if (rest.startsWith(':') || rest.startsWith('-')) rest = rest.slice(1).trimStart();
    }
  };
  readTime();
  readLevel();
  if (time === undefined && level !== undefined) readTime();
  if (level === undefined && time === undefined) {
    const lv = LOGFMT_LEVEL.exec(text);
    if (lv) {
      level = LEVEL_WORDS[lv[2].toLowerCase()];
      const tm = LOGFMT_TIME.exec(text);
      if (tm) time = parseIsoish(tm[2]);
      const msg = LOGFMT_MSG.exec(text);
      if (msg) rest = msg[1] !== undefined ? msg[1].replace(/\\"/g, '"') : msg[2];
    }
  }
  return { json: false, time, level, message: rest };
}

export function parseLine(text: string): ParsedLine {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    const parsed = parseJsonLine(trimmed);
    if (parsed) return parsed;
  }
  return parsePlainLine(text);
}
