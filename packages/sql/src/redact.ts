/** Replace the password of a connection URL (and any `password=` query parameter) with `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) {
      if (/pass(word)?|secret|token|sslkey/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    // Not parseable: drop everything between "://" and "@" rather than risk echoing a secret.
    return url.replace(/\/\/[^/@]*@/, '//***@').replace(/(password=)[^&\s]*/gi, '$1***');
  }
}

/** The password of a URL, if any (to scrub it from engine messages). */
export function urlPassword(url: string): string | undefined {
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : undefined;
  } catch {
    return undefined;
  }
}

/** Remove every occurrence of the given secrets from a text. */
export function scrub(text: string, secrets: (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 1) out = out.split(s).join('***');
  }
  return out;
}
