import { AppError } from '@mcp-fleet/kit';

/**
 * A small glob matcher: `*` (within one path segment), `?`, `**` (across segments; `**\/` may match
 * nothing), `[abc]`, `[a-z]`, `[!x]` and `{a,b}`. It runs as a set-of-states automaton, so no
 * pattern can make matching slower than pattern length times name length (no regex backtracking).
 */
type Token =
  | { t: 'lit'; c: string }
  | { t: 'one' }
  | { t: 'star' }
  | { t: 'globstar' }
  | { t: 'anydirs' }
  | { t: 'class'; negate: boolean; items: [string, string][] };

const MAX_PATTERN = 256;
const MAX_ALTERNATIVES = 64;

function invalid(message: string): AppError {
  return new AppError('VALIDATION_ERROR', `name: ${message}`, { details: [{ path: 'name', message }] });
}

/** {a,b}c -> [ac, bc]; unbalanced braces stay literal. */
function expandBraces(pattern: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') {
      if (depth === 0) open = i;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0) {
        const inner = pattern.slice(open + 1, i);
        const parts: string[] = [];
        let d = 0;
        let start = 0;
        for (let j = 0; j < inner.length; j++) {
          if (inner[j] === '\\') j++;
          else if (inner[j] === '{') d++;
          else if (inner[j] === '}') d--;
          else if (inner[j] === ',' && d === 0) {
            parts.push(inner.slice(start, j));
            start = j + 1;
          }
        }
        parts.push(inner.slice(start));
        if (parts.length < 2) continue;
        const head = pattern.slice(0, open);
        const tails = expandBraces(pattern.slice(i + 1));
        const out: string[] = [];
        for (const p of parts) {
          for (const mid of expandBraces(p)) {
            for (const tail of tails) {
              out.push(head + mid + tail);
              if (out.length > MAX_ALTERNATIVES) throw invalid(`the {a,b} groups expand to more than ${MAX_ALTERNATIVES} patterns.`);
            }
          }
        }
        return out;
      }
    }
  }
  return [pattern];
}

function tokenize(pattern: string, caseSensitive: boolean): Token[] {
  const fold = (s: string) => (caseSensitive ? s : s.toLowerCase());
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\' && i + 1 < pattern.length) {
      tokens.push({ t: 'lit', c: fold(pattern[++i]) });
    } else if (ch === '*') {
      let j = i;
      while (pattern[j + 1] === '*') j++;
      if (j > i) {
        if (pattern[j + 1] === '/') {
          tokens.push({ t: 'anydirs' });
          j++;
        } else {
          tokens.push({ t: 'globstar' });
        }
      } else if (tokens[tokens.length - 1]?.t !== 'star') {
        tokens.push({ t: 'star' });
      }
      i = j;
    } else if (ch === '?') {
      tokens.push({ t: 'one' });
    } else if (ch === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        tokens.push({ t: 'lit', c: '[' });
        continue;
      }
      let body = pattern.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      const items: [string, string][] = [];
      for (let k = 0; k < body.length; k++) {
        if (body[k + 1] === '-' && k + 2 < body.length) {
          items.push([fold(body[k]), fold(body[k + 2])]);
          k += 2;
        } else {
          items.push([fold(body[k]), fold(body[k])]);
        }
      }
      tokens.push({ t: 'class', negate, items });
      i = close;
    } else {
      tokens.push({ t: 'lit', c: fold(ch) });
    }
  }
  return tokens;
}

function matchTokens(tokens: Token[], input: string): boolean {
  const m = tokens.length;
  const closure = (states: Set<number>) => {
    for (const s of states) {
      // Sets iterate over entries added during iteration, so this reaches every skippable state.
      const tok = tokens[s];
      if (tok && (tok.t === 'star' || tok.t === 'globstar' || tok.t === 'anydirs')) states.add(s + 1);
    }
    return states;
  };
  let current = closure(new Set([0]));
  for (const c of input) {
    const next = new Set<number>();
    for (const s of current) {
      const tok = tokens[s];
      if (!tok) continue;
      switch (tok.t) {
        case 'lit':
          if (tok.c === c) next.add(s + 1);
          break;
        case 'one':
          if (c !== '/') next.add(s + 1);
          break;
        case 'star':
          if (c !== '/') next.add(s);
          break;
        case 'globstar':
          next.add(s);
          break;
        case 'anydirs':
          next.add(s);
          if (c === '/') next.add(s + 1);
          break;
        case 'class': {
          const hit = tok.items.some(([lo, hi]) => c >= lo && c <= hi);
          if (c !== '/' && hit !== tok.negate) next.add(s + 1);
          break;
        }
      }
    }
    if (next.size === 0) return false;
    current = closure(next);
  }
  return current.has(m);
}

export interface GlobMatcher {
  /** Patterns with a "/" match the path relative to the search directory; others match the base name. */
  readonly matchesPath: boolean;
  test(candidate: string): boolean;
}

export function compileGlob(pattern: string, caseSensitive: boolean): GlobMatcher {
  if (pattern.length === 0) throw invalid('the pattern is empty.');
  if (pattern.length > MAX_PATTERN) throw invalid(`the pattern is longer than ${MAX_PATTERN} characters.`);
  if (pattern.includes('\0')) throw invalid('the pattern contains a NUL byte.');
  const cleaned = pattern.replace(/^\.\//, '');
  const alternatives = expandBraces(cleaned).map((p) => tokenize(p, caseSensitive));
  return {
    matchesPath: cleaned.includes('/'),
    test(candidate: string) {
      const value = caseSensitive ? candidate : candidate.toLowerCase();
      return alternatives.some((tokens) => matchTokens(tokens, value));
    },
  };
}
