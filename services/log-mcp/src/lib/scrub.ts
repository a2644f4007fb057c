import { isSecretName, REDACTED, redact, urlPasswordRanges } from '@mcp-fleet/kit';

/**
 * Removes secrets from log text before it is matched or returned: values after secret-looking keys
 * (`password=..`, `"token": ".."`, `Authorization: ..`), bearer/basic credentials and URL passwords.
 * Hand-written scanning (no regex), linear in the line length, so hostile lines cannot slow it down.
 */

const KEY_CHAR = /[A-Za-z0-9_.-]/;
const VALUE_STOP = ' \t\r\n,;&}])"\'';
const TOKEN_CHAR = /[A-Za-z0-9._~+/=-]/;
const MAX_KEY = 64;
const MAX_VALUE = 4096;

type Range = [start: number, end: number];

function keyValueRanges(text: string, out: Range[]): void {
  for (let i = 0; i < text.length; i++) {
    const sep = text[i];
    if (sep !== ':' && sep !== '=') continue;
    if (sep === ':' && text.startsWith('//', i + 1)) continue; // scheme://
    let ke = i;
    while (ke > 0 && (text[ke - 1] === ' ' || text[ke - 1] === '\t') && i - ke < 4) ke--;
    if (ke > 0 && (text[ke - 1] === '"' || text[ke - 1] === "'")) ke--;
    let ks = ke;
    while (ks > 0 && ke - ks < MAX_KEY && KEY_CHAR.test(text[ks - 1])) ks--;
    if (ks === ke || !isSecretName(text.slice(ks, ke))) continue;
    let vs = i + 1;
    while (vs < text.length && (text[vs] === ' ' || text[vs] === '\t') && vs - i < 8) vs++;
    const q = text[vs];
    let ve: number;
    if (q === '"' || q === "'") {
      vs++;
      ve = vs;
      while (ve < text.length && ve - vs < MAX_VALUE && text[ve] !== q) ve += text[ve] === '\\' ? 2 : 1;
      ve = Math.min(ve, text.length);
    } else {
      if (q === '{' || q === '[') continue;
      ve = vs;
      while (ve < text.length && ve - vs < MAX_VALUE && !VALUE_STOP.includes(text[ve])) ve++;
    }
    if (ve > vs && text.slice(vs, ve) !== REDACTED) out.push([vs, ve]);
  }
}

function schemeTokenRanges(text: string, out: Range[]): void {
  const lower = text.toLowerCase();
  for (const scheme of ['bearer ', 'basic ']) {
    let from = 0;
    for (;;) {
      const at = lower.indexOf(scheme, from);
      if (at < 0) break;
      let s = at + scheme.length;
      while (text[s] === ' ') s++;
      let e = s;
      while (e < text.length && e - s < MAX_VALUE && TOKEN_CHAR.test(text[e])) e++;
      // "basic authentication" is prose; a Basic credential is base64 and holds a digit, + / or =
      if (e - s >= 8 && (scheme === 'bearer ' || /[0-9+/=]/.test(text.slice(s, e)))) out.push([s, e]);
      from = Math.max(e, at + 1);
    }
  }
}

export function scrubText(text: string): string {
  const ranges: Range[] = [];
  keyValueRanges(text, ranges);
  schemeTokenRanges(text, ranges);
  ranges.push(...urlPasswordRanges(text));
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let pos = 0;
  for (const [s, e] of ranges) {
    if (e <= pos || e <= s) continue;
    const start = Math.max(s, pos);
    out += text.slice(pos, start) + REDACTED;
    pos = e;
  }
  return out + text.slice(pos);
}

/** A JSON log object with secret-named fields replaced, serialised, then text-scrubbed for anything nested deeper. */
export function scrubObject(obj: Record<string, unknown>): string {
  return scrubText(JSON.stringify(redact(obj)));
}
