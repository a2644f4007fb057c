import { AppError } from '@mcp-fleet/kit';

/**
 * Argument checks for everything that reaches git's command line as a revision, branch or remote
 * (decisions.md, "Security defaults"): nothing that starts with '-', no control characters or
 * whitespace, and the rules of `git check-ref-format --allow-onelevel`.
 */

function refused(field: string, value: string, why: string): AppError {
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return new AppError('VALIDATION_ERROR', `${field} ${shown} is not acceptable: ${why}.`, {
    details: [{ path: field, message: why }],
  });
}

// eslint-disable-next-line no-control-regex
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f]/;

/** Why `name` fails `git check-ref-format --allow-onelevel`, or undefined when it passes. */
export function refFormatProblem(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 255) return 'it is longer than 255 characters';
  if (name.startsWith('-')) return 'it starts with "-" (it would be read as an option)';
  if (CONTROL_OR_SPACE.test(name)) return 'it contains whitespace or control characters';
  if (/[~^:?*[\\]/.test(name)) return 'it contains one of ~ ^ : ? * [ \\';
  if (name.includes('..')) return 'it contains ".."';
  if (name.includes('@{')) return 'it contains "@{"';
  if (name === '@') return 'it is "@"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it has an empty path component';
  if (name.endsWith('.')) return 'it ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return 'a component starts with "."';
    if (part.endsWith('.lock')) return 'a component ends with ".lock"';
  }
  return undefined;
}

/** A branch or tag name (no revision suffixes). */
export function checkRefName(value: string, field: string): string {
  const problem = refFormatProblem(value);
  if (problem) throw refused(field, value, `${problem}; use a branch or tag name`);
  return value;
}

const HASH = /^[0-9a-f]{4,64}$/i;
const SUFFIXES = /(?:[~^]\d{0,6})*$/;

/** A commit: hash, ref name (HEAD, branch, tag, remote/branch) optionally followed by ~n / ^n. */
export function checkRevision(value: string, field: string): string {
  const suffix = value.match(SUFFIXES)?.[0] ?? '';
  const base = value.slice(0, value.length - suffix.length);
  if (base.length === 0) {
    throw refused(field, value, 'it names no commit; use a hash, HEAD, HEAD~n, a branch or a tag');
  }
  if (HASH.test(base)) return value;
  const problem = refFormatProblem(base);
  if (problem) throw refused(field, value, `${problem}; use a hash, HEAD, HEAD~n, a branch or a tag`);
  return value;
}

/** A remote's name as `git remote` lists it (never a URL). */
export function checkRemoteName(value: string, field: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(value) || value.includes('/') || value.includes('@')) {
    throw refused(field, value, 'it looks like a URL or path; name a configured remote such as "origin"');
  }
  const problem = refFormatProblem(value);
  if (problem) throw refused(field, value, `${problem}; name a configured remote such as "origin"`);
  return value;
}
