const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** POSIX single quoting: the only character that needs care inside '...' is ' itself. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A runtime environment export file: one `KEY='value'` line per variable, quoted so that
 * `set -a; . file; set +a` in any POSIX shell yields exactly the values (no expansion, no command
 * substitution), and parseEnvFile reads it back. NUL cannot be carried by an environment variable.
 */
export function renderEnvFile(values: Record<string, string>, header: string[] = []): string {
  const lines = header.map((h) => `# ${h.replace(/[\r\n]+/g, ' ')}`);
  for (const [name, value] of Object.entries(values).sort(([a], [b]) => a.localeCompare(b))) {
    if (!ENV_NAME.test(name)) throw new Error(`"${name}" is not an environment variable name`);
    if (value.includes('\0')) throw new Error(`${name} contains a NUL byte, which no environment variable can hold`);
    lines.push(`${name}=${shellQuote(value)}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * Reads what renderEnvFile wrote, and the usual hand-written forms: `export KEY=...`, unquoted,
 * '...' and "..." values (backslash escapes in double quotes and unquoted text), comment and blank
 * lines. No expansion of any kind is performed.
 */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  const n = text.length;
  const skipLine = () => {
    while (i < n && text[i] !== '\n') i++;
    i++;
  };
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\r' || text[i] === '\n')) i++;
    if (i >= n) break;
    if (text[i] === '#') {
      skipLine();
      continue;
    }
    if (text.startsWith('export ', i)) i += 7;
    const m = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(text.slice(i, i + 256));
    if (!m) {
      skipLine();
      continue;
    }
    const name = m[0].slice(0, -1);
    i += m[0].length;
    let value = '';
    while (i < n && !' \t\r\n'.includes(text[i])) {
      const c = text[i];
      if (c === "'") {
        const end = text.indexOf("'", i + 1);
        if (end < 0) throw new Error(`${name}: unterminated single quote`);
        value += text.slice(i + 1, end);
        i = end + 1;
      } else if (c === '"') {
        i++;
        while (i < n && text[i] !== '"') {
          if (text[i] === '\\' && i + 1 < n && '\\"$`\n'.includes(text[i + 1])) {
            if (text[i + 1] !== '\n') value += text[i + 1];
            i += 2;
          } else value += text[i++];
        }
        if (i >= n) throw new Error(`${name}: unterminated double quote`);
        i++;
      } else if (c === '\\' && i + 1 < n) {
        if (text[i + 1] !== '\n') value += text[i + 1];
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    out[name] = value;
    // anything after the value on the same line (a trailing comment) is ignored
    while (i < n && text[i] !== '\n') i++;
  }
  return out;
}
