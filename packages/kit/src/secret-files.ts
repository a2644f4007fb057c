import { realpathSync } from 'node:fs';
import path from 'node:path';
import { bool, csv } from './config';
import { AppError } from './errors';
import type { Logger } from './logger';

/**
 * The one secret-file policy of the fleet (issue 27): well-known secret files anywhere in the
 * workspace roots, and the fleet's own stores, are out of reach of every tool that confines paths
 * through the kit's Workspace. Names are matched per path segment, case-insensitively (so `a/.env/x`
 * and `.ENV`, which is `.env` on a case-insensitive filesystem, are refused too), on the real path
 * and on the path as the caller wrote it. A hard link to a secret file under another name cannot be
 * told apart from a plain file and is not caught.
 */
export const DEFAULT_SECRET_FILES = [
  // environment files, and the fleet's exported <service>.env files; templates stay readable
  '.env',
  '.env.*',
  '*.env',
  '!*.example',
  '!*.sample',
  '!*.template',
  '!*.dist',
  // private keys and key stores
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  'id_ecdsa_sk',
  'id_ed25519_sk',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.ppk',
  '*.jks',
  '*.keystore',
  '*.keytab',
  '*.kdbx',
  // credential files and directories
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.dockercfg',
  '.htpasswd',
  '.ssh',
  '.gnupg',
  '.aws',
  '.kube',
];

/** The word in SECRET_FILES that stands for DEFAULT_SECRET_FILES. */
const DEFAULT_KEYWORD = 'default';

/** details[0].message of the FORBIDDEN error for a secret file (file_list tells a secret symlink target by it). */
export const SECRET_FILE_DETAIL = 'secret file';

const segmentPatterns = (fallback: string[]) =>
  csv(fallback).superRefine((patterns, ctx) => {
    for (const p of patterns) {
      const body = p.startsWith('!') ? p.slice(1) : p;
      if (body === '' || /[\\/]/.test(body) || body.length > 200) {
        ctx.addIssue({ code: 'custom', message: `"${p}" is not a file-name pattern (one path segment, * and ?, ! to exempt)` });
      }
    }
  });

/**
 * The policy's variables. Every service that confines paths spreads these into its config schema
 * and passes secretFilesFrom(config) to Workspace.open.
 */
export const secretFilesEnvShape = {
  SECRET_FILES: segmentPatterns([DEFAULT_KEYWORD])
    .describe(
      'File-name patterns (one path segment, case-insensitive, * and ?; !pattern exempts) the workspace tools refuse to read, write, list the contents of or search, anywhere in the roots. Replaces the default list; the word "default" stands for it (default: .env, .env.*, *.env but not *.example/*.sample/*.template/*.dist, private keys such as id_rsa, *.pem, *.key, *.p12, *.pfx, and .netrc, .pgpass, .git-credentials, .npmrc, .ssh, .aws, ...).',
    )
    .meta({ secret: false }),
  SECRET_PATHS: csv([])
    .describe(
      'More files or directories (absolute, or relative to the working directory) no workspace tool may touch, besides DATA_DIR, which is always refused (put API_KEYS_FILE or a token file kept elsewhere here).',
    )
    .meta({ secret: false }),
  ALLOW_SECRET_FILES: bool(false)
    .describe('1 turns the SECRET_FILES name check off (logged as a warning at start); DATA_DIR and SECRET_PATHS stay refused.')
    .meta({ secret: false }),
};

export interface SecretFilesConfig {
  DATA_DIR: string;
  SECRET_FILES?: string[];
  SECRET_PATHS?: string[];
  ALLOW_SECRET_FILES?: boolean;
}

export interface ProtectedPath {
  path: string;
  /** How a refusal names it: "the fleet's data directory (DATA_DIR)", ... */
  label: string;
}

export interface SecretFilesOptions {
  /** Segment patterns; "default" expands to DEFAULT_SECRET_FILES. Unset: the default list. */
  patterns?: string[];
  /** Turns the name patterns off (protected paths stay). */
  allow?: boolean;
  /** Files and directories refused whole (DATA_DIR, SECRET_PATHS, a service's own stores). */
  protectedPaths?: ProtectedPath[];
}

/**
 * The options for Workspace.open from a service's config: its patterns, DATA_DIR and SECRET_PATHS
 * protected, plus the service's own `stores` (e.g. a backup directory configured elsewhere).
 * Logs the opt-out when ALLOW_SECRET_FILES is on.
 */
export function secretFilesFrom(config: SecretFilesConfig, logger?: Logger, stores: ProtectedPath[] = []): SecretFilesOptions {
  if (config.ALLOW_SECRET_FILES) {
    logger?.warn('ALLOW_SECRET_FILES=1: the workspace tools may read and write secret files (.env, private keys, ...) in the roots');
  }
  return {
    patterns: config.SECRET_FILES,
    allow: config.ALLOW_SECRET_FILES,
    protectedPaths: [
      { path: config.DATA_DIR, label: "the fleet's data directory (DATA_DIR)" },
      ...(config.SECRET_PATHS ?? []).map((p) => ({ path: p, label: 'a protected path (SECRET_PATHS)' })),
      ...stores,
    ],
  };
}

function globSource(pattern: string): string {
  let out = '';
  for (const ch of pattern) out += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return out;
}

/**
 * One case-insensitive test for all of `patterns`. Those that start with * are one `^.*(?:...)$`
 * group instead of one `.*` each (the same names match): the engine tried every such alternative
 * from the start of the name and backtracked through it, ~0.5 µs for a plain name against the
 * default list (ten *.x patterns), which a listing pays per entry; the one group takes ~0.07 µs.
 */
function anyOf(patterns: string[]): RegExp | undefined {
  if (patterns.length === 0) return undefined;
  const whole = patterns.filter((p) => !p.startsWith('*')).map(globSource);
  const tails = patterns.filter((p) => p.startsWith('*')).map((p) => globSource(p.slice(1)));
  const groups = [...(whole.length ? [`^(?:${whole.join('|')})$`] : []), ...(tails.length ? [`^.*(?:${tails.join('|')})$`] : [])];
  return new RegExp(groups.join('|'), 'i');
}

/** A path as the filesystem has it: the real path of its deepest existing ancestor plus the rest. */
export function realpathLoose(p: string): string {
  let existing = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync.native(existing), ...rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return path.resolve(p);
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

export type SecretReason = { kind: 'name'; segment: string; pattern: string } | { kind: 'store'; store: ProtectedPath };

/** Compiled name patterns and protected paths (real paths). */
export class SecretFiles {
  readonly patterns: string[];
  readonly protectedPaths: ProtectedPath[];
  private readonly include?: RegExp;
  private readonly exempt?: RegExp;
  private readonly each: [string, RegExp][];

  constructor(options: SecretFilesOptions = {}) {
    const listed = options.patterns ?? [DEFAULT_KEYWORD];
    const expanded = options.allow ? [] : listed.flatMap((p) => (p.toLowerCase() === DEFAULT_KEYWORD ? DEFAULT_SECRET_FILES : [p]));
    this.patterns = [...new Set(expanded)];
    this.include = anyOf(this.patterns.filter((p) => !p.startsWith('!')));
    this.exempt = anyOf(this.patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
    this.each = this.patterns.filter((p) => !p.startsWith('!')).map((p) => [p, anyOf([p])!]);
    this.protectedPaths = (options.protectedPaths ?? []).map((p) => ({ ...p, path: realpathLoose(p.path) }));
  }

  /** The pattern one file name matches, or undefined (exempted names and names matching nothing). */
  matchName(name: string): string | undefined {
    if (!this.include?.test(name) || this.exempt?.test(name)) return undefined;
    return this.each.find(([, re]) => re.test(name))?.[0];
  }

  /** The reason the name check refuses any segment of `relative` (forward or native slashes), or undefined. */
  matchSegments(relative: string): SecretReason | undefined {
    if (this.include === undefined || relative === '') return undefined;
    for (const segment of relative.split(/[\\/]+/)) {
      const pattern = segment === '' ? undefined : this.matchName(segment);
      if (pattern !== undefined) return { kind: 'name', segment, pattern };
    }
    return undefined;
  }
}

/** FORBIDDEN for a secret path, saying which setting opens it. */
export function secretFileError(reason: SecretReason, field: string, input: string): AppError {
  const details = [{ path: field, message: SECRET_FILE_DETAIL }];
  if (reason.kind === 'name') {
    return new AppError(
      'FORBIDDEN',
      `${field} "${input}" is a secret file ("${reason.segment}" matches the secret-file pattern "${reason.pattern}"); the workspace tools do not read, write, list or search secret files. Ask the user for what you need from it; the operator can narrow SECRET_FILES or set ALLOW_SECRET_FILES=1.`,
      { details },
    );
  }
  return new AppError(
    'FORBIDDEN',
    `${field} "${input}" lies in ${reason.store.label}, where the fleet keeps its own state and secrets; no workspace tool reaches it. The operator can move DATA_DIR out of the workspace roots (or drop the path from SECRET_PATHS).`,
    { details },
  );
}

/** True for the error secretFileError makes. */
export function isSecretFileError(err: unknown): boolean {
  if (!(err instanceof AppError) || err.code !== 'FORBIDDEN' || !Array.isArray(err.details)) return false;
  return (err.details[0] as { message?: unknown } | undefined)?.message === SECRET_FILE_DETAIL;
}
