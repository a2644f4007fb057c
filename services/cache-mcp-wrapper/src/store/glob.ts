import { AppError } from '@mcp-fleet/kit';

/**
 * Redis-style glob patterns (`*`, `?`, `[abc]`, `[^a-z]`, `\x`), matched the same way in the
 * in-process store as Redis matches them, in O(key x pattern) time (no regex backtracking).
 */
type Token = { t: 'star' } | { t: 'any' } | { t: 'lit'; c: string } | { t: 'set'; neg: boolean; items: [string, string][] };

export interface Glob {
  tokens: Token[];
  match(key: string): boolean;
}

function invalid(message: string): AppError {
  return new AppError('VALIDATION_ERROR', `pattern ${message}; escape literal * ? [ ] \\ with a backslash.`, {
    details: [{ path: 'pattern', message }],
  });
}

export function compileGlob(pattern: string): Glob {
  const chars = [...pattern];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '*') {
      if (tokens[tokens.length - 1]?.t !== 'star') tokens.push({ t: 'star' });
    } else if (c === '?') {
      tokens.push({ t: 'any' });
    } else if (c === '\\') {
      if (i + 1 >= chars.length) throw invalid('ends with a lone backslash');
      tokens.push({ t: 'lit', c: chars[++i] });
    } else if (c === '[') {
      let j = i + 1;
      const neg = chars[j] === '^';
      if (neg) j++;
      const items: [string, string][] = [];
      let closed = false;
      while (j < chars.length) {
        let a = chars[j];
        if (a === ']') {
          closed = true;
          break;
        }
        if (a === '\\') {
          if (j + 1 >= chars.length) break;
          a = chars[++j];
        }
        if (chars[j + 1] === '-' && j + 2 < chars.length && chars[j + 2] !== ']') {
          let b = chars[j + 2];
          j += 2;
          if (b === '\\' && j + 1 < chars.length) b = chars[++j];
          items.push(a <= b ? [a, b] : [b, a]);
        } else {
          items.push([a, a]);
        }
        j++;
      }
      if (!closed) throw invalid('has a [ without its closing ]');
      tokens.push({ t: 'set', neg, items });
      i = j;
    } else {
      tokens.push({ t: 'lit', c });
    }
  }
  return { tokens, match: (key) => matchTokens(tokens, [...key]) };
}

function one(tok: Token, ch: string): boolean {
  switch (tok.t) {
    case 'any':
      return true;
    case 'lit':
      return tok.c === ch;
    case 'set': {
      const hit = tok.items.some(([a, b]) => ch >= a && ch <= b);
      return tok.neg ? !hit : hit;
    }
    default:
      return false;
  }
}

/** Classic wildcard matching: on a mismatch, retry from the last star one character further. */
function matchTokens(tokens: Token[], key: string[]): boolean {
  let p = 0;
  let k = 0;
  let starP = -1;
  let starK = 0;
  while (k < key.length) {
    if (p < tokens.length && tokens[p].t === 'star') {
      starP = p++;
      starK = k;
    } else if (p < tokens.length && one(tokens[p], key[k])) {
      p++;
      k++;
    } else if (starP >= 0) {
      p = starP + 1;
      k = ++starK;
    } else {
      return false;
    }
  }
  while (p < tokens.length && tokens[p].t === 'star') p++;
  return p === tokens.length;
}

/** A literal string as a glob (the namespace prefix in front of a caller's pattern). */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
