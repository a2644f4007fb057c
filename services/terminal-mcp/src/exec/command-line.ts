import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { parse, quote, type ParseEntry } from 'shell-quote';

export interface CommandPolicy {
  /** Program names or exact paths; `*` allows any program. */
  allowed: string[];
  allowShell: boolean;
  shell: string;
}

export interface CommandPlan {
  /** What is spawned (the program, or the shell in shell mode). */
  file: string;
  args: string[];
  /** The programs the command line starts, as checked against the allowlist. */
  programs: string[];
  shell: boolean;
}

/** Marks `$NAME` expansions while parsing; it cannot occur in input because NUL bytes are refused. */
const VAR_MARK = '\0var\0';

/** Marks glob words in shell mode (their expansion is only known to the shell). */
const GLOB_MARK = '\0glob\0';

/** Programs whose options checkArguments inspects. */
const GUARDED = new Set(['sort', 'date', 'find', 'uniq']);

const CONTROL_OPS = new Set([';', '&&', '||', '|', '|&', '&', ';;', '(', ')']);

function forbidden(message: string, detail: string): AppError {
  return new AppError('FORBIDDEN', message, { details: [{ path: 'command', message: detail }] });
}

function shellDisabled(construct: string): AppError {
  return forbidden(
    `The command uses ${construct}, which needs a shell, and the shell is disabled on this service (TERMINAL_ALLOW_SHELL=false). ` +
      'Run one program at a time and pass literal arguments in args[].',
    `shell syntax: ${construct}`,
  );
}

function describeEntry(entry: Exclude<ParseEntry, string>): string {
  if ('comment' in entry) return 'a comment (#)';
  if (entry.op === 'glob') return `the glob pattern "${entry.pattern}"`;
  return `the operator "${entry.op}"`;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function checkCharacters(command: string): void {
  if (command.includes('\0')) {
    throw new AppError('VALIDATION_ERROR', 'command contains a NUL byte; remove it.', {
      details: [{ path: 'command', message: 'NUL byte' }],
    });
  }
  if (CONTROL_CHARS.test(command)) {
    throw forbidden(
      'command contains a line break or control character, which a shell reads as a command separator; send one command line.',
      'control character',
    );
  }
}

/** Refuses programs off the allowlist: bare names are looked up on PATH, paths must be listed exactly. */
export function checkProgram(program: string, allowed: string[]): void {
  if (allowed.includes('*')) return;
  if (program.includes('/')) {
    if (allowed.includes(program)) return;
    throw forbidden(
      `"${program}" is a path; programs are named by their bare name (e.g. "${path.basename(program)}") and looked up on PATH, unless TERMINAL_ALLOWED_COMMANDS lists the exact path.`,
      'program path not allowlisted',
    );
  }
  if (!allowed.includes(program)) {
    throw forbidden(
      `"${program}" is not an allowed program. Allowed: ${allowed.filter((a) => !a.includes('/')).join(', ')} (TERMINAL_ALLOWED_COMMANDS).`,
      'program not allowlisted',
    );
  }
}

/** Options of an allowlisted program that write files, start programs or change the system. */
interface RefusedOptions {
  /** Long names; GNU getopt accepts any unambiguous prefix (`--outp`), so prefixes are refused too. */
  long: string[];
  /** Short letters, also inside a cluster (`-ro`) and with an attached value (`-o/tmp/x`). */
  short: string;
  /** Short letters that take a value: the rest of the cluster is that value, not more letters. */
  withValue: string;
  why: string;
}

const REFUSED_OPTIONS: Record<string, RefusedOptions> = {
  sort: {
    long: ['output', 'compress-program', 'temporary-directory', 'random-source', 'files0-from'],
    short: 'oT',
    withValue: 'kotST',
    why: '--output/-o writes a file, --compress-program starts a program, and -T/--random-source/--files0-from name files',
  },
  date: { long: ['set', 'file'], short: 'sf', withValue: 'dfrsI', why: '--set/-s changes the system clock and --file/-f reads a file' },
};

/** Whether an argument spells one of the refused options, in any form getopt accepts. */
function spellsRefused(arg: string, refused: RefusedOptions): boolean {
  if (arg.startsWith('--')) {
    const name = arg.slice(2).split('=')[0].toLowerCase();
    return name.length > 0 && refused.long.some((option) => option.startsWith(name));
  }
  if (!arg.startsWith('-') || arg === '-') return false;
  for (const letter of arg.slice(1)) {
    if (refused.short.includes(letter)) return true;
    if (refused.withValue.includes(letter)) return false; // the rest is this option's value
  }
  return false;
}

/**
 * Options of allowlisted programs that would write files or start other programs; refused so the
 * allowlist means what it says. This is the second layer: the OS sandbox is the wall (a program
 * sees only the workspace roots). With `*` the operator has opted out of all program checks.
 */
export function checkArguments(program: string, args: string[]): void {
  const name = path.basename(program);
  const refuse = (why: string) => {
    throw forbidden(`${name} ${why}; that option is refused here.`, `refused ${name} option`);
  };
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  const refused = REFUSED_OPTIONS[name];
  if (refused && options.some((a) => spellsRefused(a, refused))) refuse(refused.why);
  if (name === 'find' && args.some((a) => /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/.test(a))) {
    refuse('-exec/-ok/-delete/-fprint run programs or change files');
  }
  if (name === 'uniq') {
    let operands = 0;
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === '--') {
        operands += args.length - i - 1;
        break;
      }
      if (/^-[fsw]$/.test(a)) i++;
      else if (!a.startsWith('-') || a === '-') operands++;
    }
    if (operands > 1) refuse('writes its second operand as an output file');
  }
}

interface SimpleCommand {
  program: string;
  args: string[];
}

/** The simple commands of a shell command line: program (first word) and its argument words. */
function simpleCommands(entries: ParseEntry[]): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand | undefined;
  let skipNext = false;
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      if ('comment' in entry) break;
      if (entry.op === 'glob') {
        if (!current) throw forbidden(`The program name "${entry.pattern}" is a glob; name the program.`, 'glob program');
        current.args.push(`${GLOB_MARK}${entry.pattern}`);
      } else if (CONTROL_OPS.has(entry.op)) {
        current = undefined;
        skipNext = false;
      } else {
        skipNext = true; // a redirection: the next word is a file name
      }
      continue;
    }
    if (skipNext) {
      skipNext = false;
      continue;
    }
    if (current) {
      current.args.push(entry);
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(entry)) continue; // NAME=value prefix
    if (entry.includes(VAR_MARK) || entry === '') {
      throw forbidden(
        'A program name comes from a variable, so it cannot be checked against the allowlist; name the program.',
        'program from variable',
      );
    }
    current = { program: entry, args: [] };
    commands.push(current);
  }
  return commands;
}

/** Turns a caller's command (and optional literal args) into what is spawned, enforcing the policy. */
export function planCommand(command: string, extraArgs: string[] | undefined, policy: CommandPolicy): CommandPlan {
  checkCharacters(command);
  for (const [i, arg] of (extraArgs ?? []).entries()) {
    if (arg.includes('\0')) {
      throw new AppError('VALIDATION_ERROR', `args[${i}] contains a NUL byte; remove it.`, {
        details: [{ path: `args.${i}`, message: 'NUL byte' }],
      });
    }
  }
  const anyProgram = policy.allowed.includes('*');

  if (policy.allowShell) {
    const line = extraArgs && extraArgs.length > 0 ? `${command} ${quote(extraArgs)}` : command;
    if (!anyProgram) {
      if (line.includes('`') || /\$\(|[<>]\(/.test(line)) {
        throw forbidden(
          'Command substitution ($(...), `...`, <(...)) would start programs the allowlist cannot see; it is only accepted when TERMINAL_ALLOWED_COMMANDS is "*".',
          'command substitution',
        );
      }
      const commands = simpleCommands(parse(line, () => VAR_MARK));
      if (commands.length === 0)
        throw new AppError('VALIDATION_ERROR', 'command names no program.', { details: [{ path: 'command', message: 'empty' }] });
      for (const c of commands) checkProgram(c.program, policy.allowed);
      for (const c of commands) {
        // A variable, glob or brace word could expand to a refused option (a file named "-o").
        if (GUARDED.has(path.basename(c.program)) && c.args.some((a) => a.includes('\0') || a.includes('{'))) {
          throw forbidden(
            `Arguments of ${path.basename(c.program)} that the shell expands ($VAR, globs, braces) cannot be checked; write them out literally.`,
            'expansion in guarded arguments',
          );
        }
        checkArguments(c.program, c.args);
      }
      const programs = commands.map((c) => c.program);
      return { file: policy.shell, args: ['-c', line], programs, shell: true };
    }
    return { file: policy.shell, args: ['-c', line], programs: [], shell: true };
  }

  if (command.includes('`')) throw shellDisabled('backticks (command substitution)');
  let usedVariable = false;
  const entries = parse(command, () => {
    usedVariable = true;
    return '';
  });
  for (const entry of entries) {
    if (typeof entry === 'string') continue;
    if (usedVariable && 'op' in entry && entry.op === '(') throw shellDisabled('$(...) (command substitution)');
    throw shellDisabled(describeEntry(entry));
  }
  if (usedVariable) throw shellDisabled('$ expansion (variables or $(...))');
  const argv = [...(entries as string[]), ...(extraArgs ?? [])];
  if (argv.length === 0 || argv[0] === '') {
    throw new AppError('VALIDATION_ERROR', 'command names no program; send e.g. "ls -la".', {
      details: [{ path: 'command', message: 'empty' }],
    });
  }
  const [program, ...args] = argv;
  checkProgram(program, policy.allowed);
  if (!anyProgram) checkArguments(program, args);
  return { file: program, args, programs: [program], shell: false };
}
