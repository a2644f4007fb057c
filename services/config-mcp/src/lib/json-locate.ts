/**
 * Finds where JSON text stops being valid. JSON.parse's own message quotes the input (which may hold
 * secrets) and gives no position on Node 20, so errors are located here instead. Iterative, so deeply
 * nested input cannot overflow the stack.
 */
export interface JsonErrorLocation {
  offset: number;
  line: number;
  column: number;
  message: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ['true', 'false', 'null'];

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export function locateJsonError(text: string): JsonErrorLocation | undefined {
  let i = 0;
  const stack: ('{' | '[')[] = [];
  // what the scanner expects next
  type Want = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'comma-or-close' | 'end';
  let want = 'value' as Want;
  const fail = (offset: number, message: string): JsonErrorLocation => ({ offset, ...lineColumn(text, offset), message });
  const skipWs = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const readString = (): JsonErrorLocation | undefined => {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail(i, 'Control character inside a string; escape it');
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail(i, 'Bad \\u escape in a string');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) return fail(i, 'Bad escape sequence in a string');
        i += 2;
        continue;
      }
      i++;
    }
    return fail(start, 'Unterminated string');
  };
  const afterValue = () => {
    want = stack.length === 0 ? 'end' : 'comma-or-close';
  };
  for (;;) {
    skipWs();
    if (i >= text.length) {
      return want === 'end' ? undefined : fail(i, 'Unexpected end of input');
    }
    const ch = text[i];
    switch (want) {
      case 'end':
        return fail(i, 'Unexpected text after the end of the JSON value');
      case 'colon':
        if (ch !== ':') return fail(i, 'Expected ":" after an object key');
        i++;
        want = 'value';
        continue;
      case 'comma-or-close': {
        const top = stack[stack.length - 1];
        if (ch === ',') {
          i++;
          want = top === '{' ? 'key' : 'value';
          continue;
        }
        if ((top === '{' && ch === '}') || (top === '[' && ch === ']')) {
          i++;
          stack.pop();
          afterValue();
          continue;
        }
        return fail(i, `Expected "," or "${top === '{' ? '}' : ']'}"`);
      }
      case 'key':
      case 'key-or-close': {
        if (want === 'key-or-close' && ch === '}') {
          i++;
          stack.pop();
          afterValue();
          continue;
        }
        if (ch !== '"') return fail(i, 'Expected a double-quoted object key');
        const err = readString();
        if (err) return err;
        want = 'colon';
        continue;
      }
      case 'value':
      case 'value-or-close': {
        if (want === 'value-or-close' && ch === ']') {
          i++;
          stack.pop();
          afterValue();
          continue;
        }
        if (ch === '{') {
          stack.push('{');
          i++;
          want = 'key-or-close';
          continue;
        }
        if (ch === '[') {
          stack.push('[');
          i++;
          want = 'value-or-close';
          continue;
        }
        if (ch === '"') {
          const err = readString();
          if (err) return err;
          afterValue();
          continue;
        }
        NUMBER.lastIndex = i;
        const num = NUMBER.exec(text);
        if (num && num[0].length > 0 && num[0] !== '-') {
          i += num[0].length;
          afterValue();
          continue;
        }
        const literal = LITERALS.find((l) => text.startsWith(l, i));
        if (literal) {
          i += literal.length;
          afterValue();
          continue;
        }
        return fail(i, 'Unexpected character where a value was expected');
      }
    }
  }
}
