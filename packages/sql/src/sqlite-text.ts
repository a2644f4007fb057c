/**
 * A lexer for SQLite statement text, enough to (1) count statements the way sqlite3_complete()
 * does, including `CREATE TRIGGER ... BEGIN ...; END;` bodies, (2) find the leading keyword and
 * (3) locate parameters and tokens outside strings and comments. node-sqlite3 prepares only the
 * first statement and silently ignores the rest, so trailing statements are detected here and
 * refused instead.
 */

export type TokenKind = 'ws' | 'semi' | 'word' | 'string' | 'ident' | 'param' | 'other';

export interface Token {
  kind: TokenKind;
  text: string;
  /** 0-based offset in the source text. */
  start: number;
}

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  const push = (kind: TokenKind, start: number, end: number) => tokens.push({ kind, text: sql.slice(start, end), start });
  while (i < n) {
    const c = sql[i];
    const start = i;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      while (i < n && /\s/.test(sql[i])) i++;
      push('ws', start, i);
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
      push('ws', start, i);
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      push('ws', start, i);
    } else if (c === ';') {
      i++;
      push('semi', start, i);
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      i++;
      while (i < n) {
        if (sql[i] === close) {
          if (close !== ']' && sql[i + 1] === close) {
            i += 2;
            continue;
          }
          i++;
          break;
        }
        i++;
      }
      push(c === "'" ? 'string' : 'ident', start, i);
    } else if (c === '?') {
      i++;
      while (i < n && /[0-9]/.test(sql[i])) i++;
      push('param', start, i);
    } else if ((c === ':' || c === '@' || c === '$') && i + 1 < n && WORD.test(sql[i + 1])) {
      i++;
      while (i < n && WORD.test(sql[i])) i++;
      push('param', start, i);
    } else if (WORD.test(c)) {
      while (i < n && WORD.test(sql[i])) i++;
      push('word', start, i);
    } else {
      i++;
      push('other', start, i);
    }
  }
  return tokens;
}

// sqlite3_complete() state machine (src/complete.c): tokens SEMI WS OTHER EXPLAIN CREATE TEMP TRIGGER END.
const TRANS: number[][] = [
  /* 0 INVALID */ [1, 0, 2, 3, 4, 2, 2, 2],
  /* 1 START   */ [1, 1, 2, 3, 4, 2, 2, 2],
  /* 2 NORMAL  */ [1, 2, 2, 2, 2, 2, 2, 2],
  /* 3 EXPLAIN */ [1, 3, 3, 2, 4, 2, 2, 2],
  /* 4 CREATE  */ [1, 4, 2, 2, 2, 4, 5, 2],
  /* 5 TRIGGER */ [6, 5, 5, 5, 5, 5, 5, 5],
  /* 6 SEMI    */ [6, 6, 5, 5, 5, 5, 5, 7],
  /* 7 END     */ [1, 7, 5, 5, 5, 5, 5, 5],
];

function classify(t: Token): number {
  if (t.kind === 'semi') return 0;
  if (t.kind === 'ws') return 1;
  if (t.kind === 'word') {
    switch (t.text.toUpperCase()) {
      case 'EXPLAIN':
        return 3;
      case 'CREATE':
        return 4;
      case 'TEMP':
      case 'TEMPORARY':
        return 5;
      case 'TRIGGER':
        return 6;
      case 'END':
        return 7;
    }
  }
  return 2;
}

export interface StatementScan {
  /** Statements with content (empty ones such as `;;` are not counted). */
  count: number;
  /** Upper-case leading keyword of the first statement ('' when there is none). */
  keyword: string;
  /** Offset where the second statement starts, when there is one. */
  secondStart?: number;
  tokens: Token[];
}

export function scanStatements(sql: string): StatementScan {
  const tokens = tokenize(sql);
  let state = 0;
  let count = 0;
  let inStatement = false;
  let keyword = '';
  let secondStart: number | undefined;
  for (const t of tokens) {
    const cls = classify(t);
    if (cls !== 0 && cls !== 1 && !inStatement) {
      inStatement = true;
      count++;
      if (count === 1) keyword = t.kind === 'word' ? t.text.toUpperCase() : t.text;
      if (count === 2) secondStart = t.start;
    }
    state = TRANS[state][cls];
    if (cls === 0 && state === 1) inStatement = false;
  }
  return { count, keyword, secondStart, tokens };
}

/** The first word tokens of the first statement, upper case (e.g. ['VACUUM', 'INTO']). */
export function leadingWords(tokens: Token[], max = 8): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'semi') break;
    if (t.kind === 'word') out.push(t.text.toUpperCase());
    if (out.length >= max) break;
  }
  return out;
}

/** The text with every bound parameter replaced by NULL (for describing a statement's columns). */
export function withParamsAsNull(tokens: Token[]): string {
  return tokens.map((t) => (t.kind === 'param' ? 'NULL' : t.text)).join('');
}

/** 0-based offset of the first token (outside strings and comments) whose text equals `text`. */
export function findToken(tokens: Token[], text: string): number | undefined {
  const wanted = text.toUpperCase();
  return tokens.find((t) => t.kind !== 'ws' && t.text.toUpperCase() === wanted)?.start;
}
