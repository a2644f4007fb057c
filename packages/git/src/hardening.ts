/**
 * git that trusts nothing in a repository (issue 27). Everything the fleet forces on git, in one
 * place, with the reason for each item. Three layers, each enough against a different mistake:
 *
 * 1. The repository's own config file is never read by git: inside the sandbox a sanitized copy
 *    (only the data settings in KEPT_REPOSITORY_SETTINGS; no includes) lies over it. Settings that
 *    name a program under a name of the repository's choosing (filter.<driver>.clean,
 *    diff.<driver>.textconv, credential.<url>.helper, url.<base>.insteadOf, http.<url>.proxy, ...)
 *    cannot be reset by a single `-c`, so they are dropped this way, whatever they are called.
 * 2. HARDENED_SETTINGS are command-scope config (GIT_CONFIG_COUNT) on every git process, so they win
 *    over every file git does read (a submodule's config, a push target's config, an include) and
 *    reach git's own child processes; HARDENED_ENV switches off system and global config.
 * 3. The OS sandbox (@mcp-fleet/sandbox): should anything still run, it sees only the repository
 *    (read-only unless the tool writes), no network unless pushing to an approved host, no DATA_DIR,
 *    no home, no other process.
 *
 * With SANDBOX=off there is no layer 1 or 3: repositories that set any of PROGRAM_SETTINGS are then
 * refused instead (programSettings below).
 */

export interface ForcedSetting {
  key: string;
  value: string;
  why: string;
}

/** Command-scope settings on every git process (the last word over every config file). */
export const HARDENED_SETTINGS: readonly ForcedSetting[] = [
  { key: 'core.fsmonitor', value: 'false', why: 'a program git runs on every status/diff/add; a submodule or included file could set it' },
  { key: 'core.hooksPath', value: '/dev/null', why: "no hook of the repository (or of a push target's, see RECEIVE_SETTINGS) ever runs" },
  { key: 'core.pager', value: 'cat', why: 'the pager is a program (git does not page without a terminal, but never trust that)' },
  { key: 'core.editor', value: 'false', why: 'no editor program; commits take their message from the call' },
  { key: 'sequence.editor', value: 'false', why: 'as core.editor, for rebase todo lists' },
  { key: 'core.askPass', value: '', why: 'no password-prompt program' },
  { key: 'credential.helper', value: '', why: 'empty resets the list: no credential helper program (credentials only from the URL)' },
  { key: 'core.sshCommand', value: 'false', why: 'ssh runs only as GIT_SSH_COMMAND built by git_push for a checked host' },
  { key: 'core.gitProxy', value: 'none', why: 'no proxy program for git:// (which is refused anyway)' },
  { key: 'diff.external', value: '', why: 'no external diff program (diff/log also pass --no-ext-diff)' },
  { key: 'core.attributesFile', value: '/dev/null', why: 'no attribute file outside the repository selects a driver' },
  { key: 'core.alternateRefsCommand', value: '', why: 'a program run for alternates (a push target may set it)' },
  { key: 'core.untrackedCache', value: 'false', why: 'status must not write the index of a read-only repository' },
  { key: 'protocol.allow', value: 'never', why: 'every transport refused unless listed per invocation (GIT_ALLOW_PROTOCOL)' },
  { key: 'protocol.ext.allow', value: 'never', why: 'ext:: runs any command' },
  { key: 'submodule.recurse', value: 'false', why: 'never enter a submodule (its config is as hostile and is not sanitized)' },
  { key: 'fetch.recurseSubmodules', value: 'false', why: 'as submodule.recurse' },
  { key: 'push.recurseSubmodules', value: 'no', why: 'push never pushes (or runs git in) submodules' },
  { key: 'status.submoduleSummary', value: 'false', why: 'status runs no git inside submodules' },
  { key: 'diff.ignoreSubmodules', value: 'all', why: 'diff and status never look inside submodules' },
  { key: 'gc.auto', value: '0', why: 'no automatic gc (it runs programs and writes)' },
  { key: 'maintenance.auto', value: 'false', why: 'no automatic maintenance' },
  { key: 'commit.gpgSign', value: 'false', why: 'signing runs gpg.program' },
  { key: 'tag.gpgSign', value: 'false', why: 'as commit.gpgSign' },
  { key: 'push.gpgSign', value: 'false', why: 'as commit.gpgSign' },
  { key: 'log.showSignature', value: 'false', why: 'verifying signatures runs gpg.program' },
  { key: 'gpg.program', value: 'false', why: 'should signing or verification still be asked for, it fails' },
  { key: 'gpg.ssh.program', value: 'false', why: 'as gpg.program' },
  { key: 'gpg.x509.program', value: 'false', why: 'as gpg.program' },
  { key: 'http.proxy', value: '', why: 'a push connects to the checked host itself, never through a proxy' },
  { key: 'http.followRedirects', value: 'false', why: 'a redirect would lead to a host the outbound policy did not check' },
  { key: 'http.sslVerify', value: 'true', why: 'TLS is always verified' },
  { key: 'core.quotePath', value: 'false', why: 'paths in output as they are (not security, parsing)' },
  { key: 'color.ui', value: 'false', why: 'no escape sequences in output (not security, parsing)' },
];

/**
 * Also forced on the receiving side of a push to a local repository. git does not pass command
 * config to a local receive-pack (it unsets GIT_CONFIG_PARAMETERS and GIT_CONFIG_COUNT for it), so
 * these travel in `--receive-pack` (receivePackCommand).
 */
export const RECEIVE_SETTINGS: readonly ForcedSetting[] = [
  { key: 'receive.denyCurrentBranch', value: 'refuse', why: 'updateInstead would check files out in the target, running its filters' },
  { key: 'receive.denyDeleteCurrent', value: 'refuse', why: 'as denyCurrentBranch' },
  { key: 'receive.autogc', value: 'false', why: 'no gc after receiving' },
  { key: 'receive.updateServerInfo', value: 'false', why: 'writes nothing beyond the pushed refs' },
  { key: 'receive.procReceiveRefs', value: '', why: 'the proc-receive hook is a program' },
];

/** The environment of every git process (besides PATH, TZ, the repository's location and the config list). */
export const HARDENED_ENV: Readonly<Record<string, string>> = {
  // No /etc/gitconfig and no ~/.gitconfig: the only config is the sanitized repository's and ours.
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  // No /etc/gitattributes.
  GIT_ATTR_NOSYSTEM: '1',
  // Never prompt for anything (there is no terminal; a prompt would only wait for the time limit).
  GIT_TERMINAL_PROMPT: '0',
  // protocol.<name>.allow=user is never satisfied.
  GIT_PROTOCOL_FROM_USER: '0',
  // refs/replace/ cannot make one object show as another.
  GIT_NO_REPLACE_OBJECTS: '1',
  // Read-only commands take no index lock and write no index.
  GIT_OPTIONAL_LOCKS: '0',
  // Caller paths are paths: no :(magic) and no globs.
  GIT_LITERAL_PATHSPECS: '1',
  // Never a pager program (git pages only to a terminal, and there is none; pager.<command> too).
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  // Stable English messages for error mapping.
  LANG: 'C',
  LC_ALL: 'C',
};

/**
 * The repository's settings git still gets (inside the sandbox), as lower-case `section.name` with
 * any subsection: data that describes the repository, its remotes and its author, never a program,
 * a file to read or a rewrite of a URL. Everything else is dropped, including include.* and
 * includeIf.*, extensions.worktreeConfig (so config.worktree is not read) and core.worktree (git
 * gets GIT_WORK_TREE).
 */
export const KEPT_REPOSITORY_SETTINGS: readonly RegExp[] = [
  /^core\.(repositoryformatversion|bare|filemode|symlinks|ignorecase|precomposeunicode|logallrefupdates|autocrlf|eol|safecrlf|checkstat|trustctime|abbrev|commentchar|sparsecheckout|sparsecheckoutcone|protecthfs|protectntfs|sharedrepository|warnambiguousrefs)$/,
  /^extensions\.(objectformat|compatobjectformat|refstorage|preciousobjects|noop)$/,
  /^index\.version$/,
  /^(user|author|committer)\.(name|email)$/,
  /^i18n\.(commitencoding|logoutputencoding)$/,
  /^remote\..+\.(url|pushurl|fetch|tagopt)$/,
  /^branch\..+\.(remote|merge|pushremote|description)$/,
  /^remote\.pushdefault$/,
  /^push\.default$/,
  /^diff\.(renames|renamelimit|algorithm|indentheuristic)$/,
];

/**
 * With SANDBOX=off only: repository settings (local or worktree scope, includes followed) that
 * make git run a program or connect somewhere of the repository's choosing. Such a repository is
 * refused, because git then reads its config file as it is.
 */
const PROGRAM_SETTINGS: readonly RegExp[] = [
  /^core\.(sshcommand|gitproxy|askpass|editor|pager|alternaterefscommand)$/,
  /^sequence\.editor$/,
  /^credential\.(.+\.)?helper$/,
  /^filter\..+\.(clean|smudge|process)$/,
  /^diff\.external$/,
  /^diff\..+\.(command|textconv)$/,
  /^merge\..+\.driver$/,
  /^remote\..+\.(uploadpack|receivepack|proxy|vcs)$/,
  /^url\..+\.(insteadof|pushinsteadof)$/,
  /^http\.(.+\.)?(proxy|curloptresolve)$/,
  /^gpg\.(.+\.)?program$/,
];

/** `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`: command-scope config through the environment (never a caller's text as an option). */
export function configEnv(settings: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

export const hardenedPairs = (list: readonly ForcedSetting[] = HARDENED_SETTINGS): [string, string][] => list.map((s) => [s.key, s.value]);

/** A word for sh, single-quoted. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * `--receive-pack` for a push to a repository on this machine: git runs it through sh with the
 * target's path appended, so the target's receive-pack runs with the same settings as ours.
 * Built only from the constant lists above.
 */
export function receivePackCommand(): string {
  const settings = [...HARDENED_SETTINGS, ...RECEIVE_SETTINGS];
  return ['git', ...settings.flatMap((s) => ['-c', shellQuote(`${s.key}=${s.value}`)]), 'receive-pack'].join(' ');
}

interface ConfigEntry {
  key: string;
  /** undefined: a key without `=` (boolean true). */
  value: string | undefined;
}

/** `git config --list -z` (optionally with --show-scope): key LF value NUL, or key NUL for a bare key. */
export function parseConfigList(list: string, withScope = false): (ConfigEntry & { scope?: string })[] {
  const parts = list.split('\0');
  if (parts.at(-1) === '') parts.pop();
  const out: (ConfigEntry & { scope?: string })[] = [];
  for (let i = 0; i < parts.length; i += withScope ? 2 : 1) {
    const scope = withScope ? parts[i] : undefined;
    const entry = withScope ? parts[i + 1] : parts[i];
    if (entry === undefined) break;
    const newline = entry.indexOf('\n');
    out.push({
      scope,
      key: newline >= 0 ? entry.slice(0, newline) : entry,
      value: newline >= 0 ? entry.slice(newline + 1) : undefined,
    });
  }
  return out;
}

/** A value as git reads it back: quoted, with \\, " and newline escaped (other characters are taken as written). */
const quoteValue = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/**
 * The sanitized config file git reads instead of the repository's: the kept entries of
 * `git config --file <config> --no-includes --list -z`, in order, re-written so that nothing but
 * those entries can be read from it.
 */
export function sanitizedConfig(list: string): string {
  const lines: string[] = ['# written by @mcp-fleet/git: the kept settings of this repository (hardening.ts)'];
  for (const { key, value } of parseConfigList(list)) {
    const lower = key.toLowerCase();
    if (!KEPT_REPOSITORY_SETTINGS.some((re) => re.test(lower))) continue;
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const section = key.slice(0, first);
    const name = key.slice(last + 1);
    if (!/^[A-Za-z0-9-]+$/.test(section) || !/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) continue;
    const sub = first === last ? undefined : key.slice(first + 1, last);
    if (sub !== undefined && /[\n\0]/.test(sub)) continue;
    lines.push(sub === undefined ? `[${section}]` : `[${section} "${sub.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`);
    lines.push(value === undefined ? `\t${name}` : `\t${name} = ${quoteValue(value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** SANDBOX=off only: config keys (lower-cased) the repository itself sets that would make git run its programs. */
export function programSettings(configList: string): string[] {
  const found = new Set<string>();
  for (const { scope, key, value } of parseConfigList(configList, true)) {
    if (scope !== 'local' && scope !== 'worktree') continue;
    const lower = key.toLowerCase();
    if (lower === 'core.fsmonitor' && !/^(false|no|off|0|)$/i.test((value ?? 'true').trim())) found.add(lower);
    if (PROGRAM_SETTINGS.some((re) => re.test(lower))) found.add(lower);
  }
  return [...found];
}
