import { AppError } from '@mcp-fleet/kit';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A JS string that cannot be encoded as UTF-8 (a lone surrogate). */
export const isWellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/** Topic or filter checks shared by the tools: UTF-8, no NUL, size cap, no empty levels in publish topics. */
export function checkTopic(topic: string, maxBytes: number, kind: 'topic' | 'filter'): void {
  const bad = (why: string) => new AppError('VALIDATION_ERROR', `The ${kind} ${why}.`, { [kind]: topic.slice(0, 200) });
  if (!isWellFormed(topic)) throw bad('is not valid UTF-8 (lone surrogate)');
  if (topic.includes('\u0000')) throw bad('contains U+0000');
  if (Buffer.byteLength(topic) > maxBytes) throw bad(`is over ${maxBytes} bytes (MQTT_MAX_TOPIC_BYTES)`);
  if (kind === 'topic') {
    if (/[+#]/.test(topic)) throw bad('contains a wildcard (+ or #); publish to a concrete topic');
    if (topic.split('/').some((l) => l === '')) throw bad('has an empty level (leading, trailing or double /)');
    if (topic.startsWith('$')) throw bad('starts with $ (broker topics such as $SYS are read-only)');
  } else {
    const levels = topic.split('/');
    levels.forEach((l, i) => {
      if (l.includes('#') && (l !== '#' || i !== levels.length - 1)) throw bad('uses # other than as the whole last level');
      if (l.includes('+') && l !== '+') throw bad('uses + other than as a whole level');
    });
  }
}
