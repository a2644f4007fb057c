/**
 * Glob matching without regular expressions (so a hostile pattern cannot backtrack): `*` and `?`
 * within one path segment, `[abc]` / `[a-z]` / `[!x]` classes, and `**` as a whole segment for any
 * number of directories. Cost is bounded by pattern length times path length.
 */

function classMatch(pattern: string, start: number, ch: string): { matched: boolean; end: number } | undefined {
  let i = start + 1;
  let negate = false;
  if (pattern[i] === '!' || pattern[i] === '^') {
    negate = true;
    i++;
  }
  let matched = false;
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    const lo = pattern[i];
    if (pattern[i + 1] === '-' && pattern[i + 2] !== undefined && pattern[i + 2] !== ']') {
      if (ch >= lo && ch <= pattern[i + 2]) matched = true;
      i += 3;
    } else {
      if (ch === lo) matched = true;
      i++;
    }
  }
  if (i >= pattern.length) return undefined; // no closing bracket: treat "[" literally
  return { matched: matched !== negate, end: i + 1 };
}

/** One segment: iterative wildcard matching with a single backtrack point (linear per star). */
function matchSegment(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const pc = pattern[p];
    if (pc === '*') {
      starP = p++;
      starT = t;
      continue;
    }
    if (pc === '?') {
      p++;
      t++;
      continue;
    }
    if (pc === '[') {
      const cls = classMatch(pattern, p, text[t]);
      if (cls) {
        if (cls.matched) {
          p = cls.end;
          t++;
          continue;
        }
      } else if (text[t] === '[') {
        p++;
        t++;
        continue;
      }
    } else if (pc !== undefined && pc === text[t]) {
      p++;
      t++;
      continue;
    }
    if (starP < 0) return false;
    p = starP + 1;
    t = ++starT;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

export function matchesGlob(pathText: string, pattern: string): boolean {
  const pSegs = pattern.split('/').filter((s, i) => s !== '' || i === 0);
  const tSegs = pathText.split('/').filter((s, i) => s !== '' || i === 0);
  // reachable[j]: the pattern prefix consumed so far can end right before text segment j
  let reachable = new Array<boolean>(tSegs.length + 1).fill(false);
  reachable[0] = true;
  for (const seg of pSegs) {
    const next = new Array<boolean>(tSegs.length + 1).fill(false);
    if (seg === '**') {
      let any = false;
      for (let j = 0; j <= tSegs.length; j++) {
        any ||= reachable[j];
        next[j] = any;
      }
    } else {
      for (let j = 0; j < tSegs.length; j++) if (reachable[j] && matchSegment(seg, tSegs[j])) next[j + 1] = true;
    }
    reachable = next;
  }
  return reachable[tSegs.length];
}
