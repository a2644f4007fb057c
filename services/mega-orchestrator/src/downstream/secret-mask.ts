/**
 * Nothing secret leaves (issue 33, item 7): the values `${VAR}` expanded into an MCP server's URL,
 * headers, environment or arguments are the operator's secrets. Such a server's URL is shown as its
 * declared template (`https://host/${TOKEN}/mcp`, without userinfo or query), and those values are
 * masked in whatever the gateway says about the server: /services, errors to callers, its log lines.
 */
import type { Logger } from '@mcp-fleet/kit';
import { displayUrl } from './downstream';

export const VARIABLE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** Values shorter than this are not masked: they would mask ordinary words, and are no secret anyway. */
const MIN_SECRET = 4;
export const MASK = '***';

/**
 * A URL as the gateway shows it: the declared template's scheme, host and path, `${NAME}` kept as
 * written (never the value), without userinfo, query or fragment. A template that does not parse as
 * a URL with its variables in place (a variable in the port, say) is shown from the expanded URL
 * with the secret values masked.
 */
export function shownUrl(template: string, expanded: string, secrets: readonly string[]): string {
  const names: string[] = [];
  const marked = template.replace(VARIABLE, (_, name: string) => `zzmcpfleetvar${names.push(name) - 1}zz`);
  let shown: string | undefined;
  try {
    new URL(marked);
    shown = displayUrl(marked);
  } catch {
    shown = undefined;
  }
  if (shown === undefined || shown === '(invalid url)') return maskSecrets(secrets)(displayUrl(expanded));
  return shown.replace(/zzmcpfleetvar(\d+)zz/g, (_, i: string) => `\${${names[Number(i)]}}`);
}

/** A name that says its value is a credential: an environment variable, a header, a command-line flag. */
const SECRET_NAME =
  /pass(word|wd|phrase)?([-_]|$)|secret|token|api[-_]?key|private[-_]?key|access[-_]?key|credential|authori[sz]ation|(^|[-_])auth([-_]|$)/i;
/** A URL's password (`scheme://user:password@host`), anywhere in a text: up to the authority's last `@`, as URL parsers read it. */
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:([^\s/?#]+)@/gi;

/**
 * Credentials written into an entry as they are, not as `${VAR}` (issue 33, item 7): a URL's
 * password in an argument (`postgresql://user:pw@host/db`, as server-postgres is run), the value of
 * an argument flag whose name says credential (`--api-key X`, `--token=X`), and the values of
 * environment variables and headers whose names say so (`GITHUB_TOKEN`, `Authorization`). They are
 * masked as `${VAR}` values are; a URL's password decoded too. The rest of an entry is shown as written.
 */
export function literalSecrets(entry: {
  args?: readonly string[];
  env?: Record<string, string>;
  headers?: Record<string, string>;
}): string[] {
  const found: string[] = [];
  const args = entry.args ?? [];
  args.forEach((arg, i) => {
    for (const m of arg.matchAll(URL_PASSWORD)) {
      found.push(m[1]);
      try {
        found.push(decodeURIComponent(m[1]));
      } catch {
        // a password that is no valid percent-encoding is masked as written
      }
    }
    const flag = /^--?([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (!flag || !SECRET_NAME.test(flag[1])) return;
    if (flag[2] !== undefined) found.push(flag[2]);
    else if (i + 1 < args.length && !args[i + 1].startsWith('-')) found.push(args[i + 1]);
  });
  for (const values of [entry.env, entry.headers])
    for (const [name, value] of Object.entries(values ?? {})) {
      if (!SECRET_NAME.test(name)) continue;
      found.push(value);
      // `Bearer <token>`, `Basic <credentials>`: the credential alone too
      const scheme = /^[A-Za-z]+ (\S+)$/.exec(value);
      if (scheme) found.push(scheme[1]);
    }
  // a value with a `${VAR}` in it is masked where it is expanded (the variable's name is no secret)
  return [...new Set(found.filter((v) => v.length >= MIN_SECRET && !HAS_VARIABLE.test(v)))];
}

/** VARIABLE without its global flag (a global regex's test() keeps state between calls). */
const HAS_VARIABLE = new RegExp(VARIABLE.source);

/** A function that replaces every secret value (and its URL-encoded spellings) in a text with ***. */
export function maskSecrets(secrets: readonly string[]): (text: string) => string {
  const spellings = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_SECRET) continue;
    spellings.add(s);
    spellings.add(encodeURIComponent(s));
    // as a URL's path keeps it (a space encoded, a slash not)
    spellings.add(encodeURI(s));
  }
  if (spellings.size === 0) return (text) => text;
  const pattern = new RegExp(
    [...spellings]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g',
  );
  return (text) => text.replace(pattern, MASK);
}

/** Every string in a value masked (objects copied, not changed): a log line's fields, an error answer. */
export function maskStrings(value: unknown, mask: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return mask(value);
  if (depth > 6 || typeof value !== 'object' || value === null) return value;
  if (value instanceof Error) return mask(value.message);
  if (Array.isArray(value)) return value.map((v) => maskStrings(v, mask, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = maskStrings(v, mask, depth + 1);
  return out;
}

/** A child of the logger whose lines have the secret values masked (the logger itself when there are none). */
export function maskingLogger(logger: Logger, secrets: readonly string[]): Logger {
  const mask = maskSecrets(secrets);
  if (!secrets.some((s) => s.length >= MIN_SECRET)) return logger;
  const child = logger.child({});
  // winston's child loggers are objects over their parent with their own (read-only) write: one more such layer
  return Object.create(child, {
    write: {
      value: (info: Record<string | symbol, unknown>, ...rest: unknown[]) => {
        const masked: Record<string | symbol, unknown> = {};
        for (const key of Reflect.ownKeys(info)) masked[key as string] = maskStrings(info[key as string], mask);
        return (child.write as (...args: unknown[]) => boolean).call(child, masked, ...rest);
      },
    },
  }) as Logger;
}
