import { childEnvFrom } from '../src/config';
import { planCommand } from '../src/exec/command-line';

const policy = { allowed: ['echo', 'ls', '/opt/tools/report'], allowShell: false, shell: '/bin/sh' };

describe('planCommand', () => {
  it('splits words like a shell and appends literal args', () => {
    expect(planCommand(`ls -la "my dir" 'x y'`, ['--', '$z'], policy)).toEqual({
      file: 'ls',
      args: ['-la', 'my dir', 'x y', '--', '$z'],
      programs: ['ls'],
      shell: false,
    });
  });

  it('accepts an exact allowlisted path, and nothing else with a slash', () => {
    expect(planCommand('/opt/tools/report --now', undefined, policy).file).toBe('/opt/tools/report');
    expect(() => planCommand('/usr/bin/ls', undefined, policy)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    expect(() => planCommand('../ls', undefined, policy)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('lets "*" allow any program, but still never a shell construct without the shell', () => {
    const any = { ...policy, allowed: ['*'] };
    expect(planCommand('/usr/bin/env', undefined, any).file).toBe('/usr/bin/env');
    expect(() => planCommand('echo a | cat', undefined, any)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('in shell mode finds the program of every simple command, skipping assignments and redirect targets', () => {
    const shell = { ...policy, allowShell: true };
    const plan = planCommand('A=1 echo hi > out.txt; ls -l | echo done && ls', undefined, shell);
    expect(plan).toMatchObject({ file: '/bin/sh', programs: ['echo', 'ls', 'echo', 'ls'], shell: true });
    expect(plan.args).toEqual(['-c', 'A=1 echo hi > out.txt; ls -l | echo done && ls']);
    expect(() => planCommand('echo > ls; cat x', undefined, shell)).toThrow(/"cat" is not an allowed program/);
    expect(() => planCommand('if true; then rm x; fi', undefined, shell)).toThrow(/"if" is not an allowed program/);
  });

  it('in shell mode with "*" passes the line through untouched, substitutions included', () => {
    const plan = planCommand('echo $(date)', ['a b'], { ...policy, allowShell: true, allowed: ['*'] });
    expect(plan).toEqual({ file: '/bin/sh', args: ['-c', "echo $(date) 'a b'"], programs: [], shell: true });
  });
});

describe('childEnvFrom', () => {
  it('keeps only the base names, LC_* and passthrough names, never secrets, and drops relative PATH entries', () => {
    const env = childEnvFrom(
      {
        PATH: '.:/usr/bin::bin:/bin',
        HOME: '/home/u',
        LANG: 'C.UTF-8',
        LC_TIME: 'C',
        TERM: 'xterm',
        TZ: 'UTC',
        EXTRA: 'yes',
        SESSION_TOKEN: 'no',
        OTHER: 'no',
        LC_PASSWORD: 'no',
      },
      ['EXTRA'],
    );
    expect(env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', LC_TIME: 'C', TERM: 'xterm', TZ: 'UTC', EXTRA: 'yes' });
  });
});
