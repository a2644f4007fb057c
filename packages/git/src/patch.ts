/**
 * Reading `git diff` output per file, so the contents of secret files never leave the service.
 * The diff runs with renames off and fixed a/ b/ prefixes, so every file's section starts with a
 * line "diff --git a/P b/P" (P C-quoted when it holds special characters), and no other line can
 * start that way: every content line starts with ' ', '+', '-', '@' or '\'.
 */

/**
 * `git diff` as withholdSections reads it: renames off and fixed prefixes (one "diff --git a/P b/P"
 * section per file), and none of the repository's programs (external diff, textconv), no
 * submodules, no colour. Options and revisions follow.
 */
export const SECTIONED_DIFF: readonly string[] = [
  'diff',
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--ignore-submodules=all',
  '--no-renames',
  '--src-prefix=a/',
  '--dst-prefix=b/',
];

export interface NumstatEntry {
  file: string;
  insertions: number;
  deletions: number;
  binary: boolean;
}

/** `git diff --numstat -z --no-renames`: "insertions TAB deletions TAB path NUL" ("-" counts for binary files). */
export function parseNumstat(out: string): NumstatEntry[] {
  const entries: NumstatEntry[] = [];
  for (const record of out.split('\0')) {
    const match = /^\n?(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(record);
    if (!match) continue;
    const binary = match[1] === '-';
    entries.push({ file: match[3], insertions: binary ? 0 : Number(match[1]), deletions: binary ? 0 : Number(match[2]), binary });
  }
  return entries;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** One C-quoted string as git writes it, from `text[start]` (a '"'); undefined when malformed. */
function unquote(text: string, start: number): { value: string; end: number } | undefined {
  const bytes: number[] = [];
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') return { value: Buffer.from(bytes).toString('utf8'), end: i + 1 };
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = text[++i];
    if (next !== undefined && next in ESCAPES) bytes.push(ESCAPES[next]);
    else if (/^[0-3][0-7]{2}$/.test(text.slice(i, i + 3))) {
      bytes.push(parseInt(text.slice(i, i + 3), 8));
      i += 2;
    } else return undefined;
  }
  return undefined;
}

/** The path of a "diff --git a/P b/P" header (both sides equal with renames off); undefined when it cannot be read. */
export function headerPath(line: string): string | undefined {
  const rest = line.slice('diff --git '.length);
  if (rest.startsWith('"')) {
    const a = unquote(rest, 0);
    if (!a || rest[a.end] !== ' ' || rest[a.end + 1] !== '"') return undefined;
    const b = unquote(rest, a.end + 1);
    if (!b || b.end !== rest.length || !a.value.startsWith('a/') || b.value !== `b/${a.value.slice(2)}`) return undefined;
    return a.value.slice(2);
  }
  const length = (rest.length - 5) / 2;
  if (!Number.isInteger(length) || length < 1 || !rest.startsWith('a/')) return undefined;
  const file = rest.slice(2, 2 + length);
  return rest.slice(2 + length) === ` b/${file}` ? file : undefined;
}

/**
 * The patch without the sections of files `withhold` picks, and the paths withheld. A section
 * whose header cannot be read (also one cut by the size limit inside its header) is withheld too.
 */
export function withholdSections(patch: string, withhold: (file: string) => boolean): { text: string; withheld: string[] } {
  const starts = [...patch.matchAll(/^diff --git /gm)].map((m) => m.index);
  if (starts.length === 0) return { text: patch, withheld: [] };
  const kept: string[] = [patch.slice(0, starts[0])];
  const withheld: string[] = [];
  starts.forEach((start, i) => {
    const section = patch.slice(start, starts[i + 1] ?? patch.length);
    const newline = section.indexOf('\n');
    const file = headerPath(newline < 0 ? section : section.slice(0, newline));
    if (file === undefined || withhold(file)) withheld.push(file ?? '(a file whose name could not be read)');
    else kept.push(section);
  });
  return { text: kept.join(''), withheld };
}
