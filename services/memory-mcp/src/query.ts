import { AppError } from '@mcp-fleet/kit';

/**
 * Search text from callers is never handed to FTS5 or to_tsquery as syntax. It is parsed here
 * into words, and each backend builds its query from the words alone:
 *   words            all must match (AND)
 *   "a phrase"       the words in this order
 *   a OR b           either
 *   -word, -"a b"    must not match
 * Everything else (* : ( ) NEAR ^ quotes left open...) is plain punctuation between words.
 */
export interface Term {
  /** One word, or several for a phrase. */
  words: string[];
}

export interface ParsedQuery {
  /** AND of clauses; each clause is an OR of terms. */
  clauses: Term[][];
  excluded: Term[];
}

export const MAX_QUERY_TERMS = 32;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

const wordsOf = (text: string): string[] => text.match(WORD) ?? [];

interface Lexeme {
  kind: 'term' | 'or';
  words: string[];
  negated: boolean;
  phrase: boolean;
}

function lex(text: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let negated = false;
    if (c === '-' && i + 1 < text.length && !/\s/.test(text[i + 1])) {
      negated = true;
      i++;
    }
    if (text[i] === '"') {
      const end = text.indexOf('"', i + 1);
      const inner = text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
      out.push({ kind: 'term', words: wordsOf(inner), negated, phrase: true });
      continue;
    }
    let j = i;
    while (j < text.length && !/\s/.test(text[j]) && text[j] !== '"') j++;
    const chunk = text.slice(i, j);
    i = j;
    if (chunk === 'OR' && !negated) out.push({ kind: 'or', words: [], negated: false, phrase: false });
    else out.push({ kind: 'term', words: wordsOf(chunk), negated, phrase: false });
  }
  return out.filter((l) => l.kind === 'or' || l.words.length > 0);
}

export function parseSearchQuery(text: string): ParsedQuery {
  const clauses: Term[][] = [];
  const excluded: Term[] = [];
  let orPending = false;
  for (const lx of lex(text)) {
    if (lx.kind === 'or') {
      orPending = clauses.length > 0;
      continue;
    }
    // A phrase stays together; a chunk such as foo:bar or e-mail is its words, each required.
    const terms: Term[] = lx.phrase ? [{ words: lx.words }] : lx.words.map((w) => ({ words: [w] }));
    if (lx.negated) {
      excluded.push(...terms);
      orPending = false;
      continue;
    }
    terms.forEach((term, n) => {
      if (n === 0 && orPending) clauses[clauses.length - 1].push(term);
      else clauses.push([term]);
    });
    orPending = false;
  }
  const count = clauses.reduce((n, c) => n + c.length, 0) + excluded.length;
  if (clauses.length === 0) {
    throw new AppError(
      'VALIDATION_ERROR',
      'The query has no words to search for (only punctuation or excluded words); add at least one word.',
      {
        details: [{ path: 'query', message: 'no searchable words' }],
      },
    );
  }
  if (count > MAX_QUERY_TERMS) {
    throw new AppError('VALIDATION_ERROR', `The query has ${count} terms; at most ${MAX_QUERY_TERMS} are allowed. Use fewer words.`, {
      details: [{ path: 'query', message: `at most ${MAX_QUERY_TERMS} terms` }],
    });
  }
  return { clauses, excluded };
}

/** An FTS5 string literal: the only FTS5 syntax callers' words ever end up in. */
const ftsString = (words: string[]) => `"${words.join(' ').replace(/"/g, '""')}"`;

export function toFts5Match(q: ParsedQuery): string {
  const positive = q.clauses.map((c) => `(${c.map((t) => ftsString(t.words)).join(' OR ')})`).join(' AND ');
  if (q.excluded.length === 0) return positive;
  return `(${positive}) NOT (${q.excluded.map((t) => ftsString(t.words)).join(' OR ')})`;
}
