import { checkRefName, checkRemoteName, checkRevision, refFormatProblem } from '../src/git/refs';
import { cleanGitMessage, programSettings } from '@mcp-fleet/git';
import { classifyPushUrl } from '../src/git/remote-url';

describe('ref, revision and remote checks', () => {
  it.each(['main', 'feature/x-1', 'v1.2.3', 'HEAD', 'release/2024.01'])('accepts the ref name %s', (name) => {
    expect(refFormatProblem(name)).toBeUndefined();
    expect(checkRefName(name, 'branch')).toBe(name);
  });

  it.each([
    '-c',
    '--upload-pack=touch /tmp/x',
    '--output=/tmp/out',
    'a b',
    'tab\there',
    'nul\0byte',
    'new\nline',
    'a..b',
    'x@{1}',
    '@',
    '/lead',
    'trail/',
    'dou//ble',
    'dot.',
    '.hidden',
    'x/.hidden',
    'name.lock',
    'what?',
    'star*',
    'br[acket',
    'back\\slash',
    'col:on',
    'til~de',
    'car^et',
    '',
  ])('refuses %j as a branch with VALIDATION_ERROR', (name) => {
    expect(() => checkRefName(name, 'branch')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  it.each(['HEAD', 'HEAD~3', 'HEAD^', 'HEAD^2~1', 'main~', 'v1.0', 'abc1234', 'a'.repeat(40), 'origin/main'])(
    'accepts the revision %s',
    (rev) => {
      expect(checkRevision(rev, 'commit1')).toBe(rev);
    },
  );

  it.each(['-c', '--output=/tmp/x', '~1', '^', 'HEAD@{1}', 'HEAD..main', 'HEAD:file', 'a b'])('refuses the revision %j', (rev) => {
    expect(() => checkRevision(rev, 'commit1')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  it.each(['https://example.com/x.git', 'git@host:x.git', '/tmp/bare.git', 'ssh://h/x', 'a/b', '-u', 'ext::sh -c touch'])(
    'refuses %j as a remote name',
    (remote) => {
      expect(() => checkRemoteName(remote, 'remote')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    },
  );

  it('accepts plain remote names', () => {
    expect(checkRemoteName('origin', 'remote')).toBe('origin');
    expect(checkRemoteName('upstream-2', 'remote')).toBe('upstream-2');
  });
});

describe('repository config screening', () => {
  it('finds program-running settings at local or worktree scope only', () => {
    const list = [
      'global',
      'core.sshcommand\nssh -i key',
      'local',
      'filter.lfs.clean\ngit-lfs clean -- %f',
      'local',
      'core.fsmonitor\nfalse',
      'worktree',
      'core.fsmonitor\n/tmp/evil',
      'local',
      'user.name\nX',
      'local',
      'remote.origin.receivepack\ntouch /tmp/p',
      '',
    ].join('\0');
    expect(programSettings(list).sort()).toEqual(['core.fsmonitor', 'filter.lfs.clean', 'remote.origin.receivepack']);
  });

  it('hides credentials embedded in URLs in git messages', () => {
    expect(cleanGitMessage('fatal: unable to access https://user:s3cret@host/x.git/')).toBe(
      'fatal: unable to access https://***@host/x.git/',
    );
  });

  it('tells local-path remotes from network ones, as git reads them', () => {
    const local = (url: string) => classifyPushUrl('origin', url);
    expect(local('/srv/x.git')).toMatchObject({ kind: 'local', path: '/srv/x.git' });
    expect(local('../x.git')).toMatchObject({ kind: 'local', path: '../x.git' });
    expect(local('file:///srv/x.git')).toMatchObject({ kind: 'local', path: '/srv/x.git' });
    // git ignores the host of a file:// URL and decodes %XX in its path
    expect(local('file://evil/srv/x.git')).toMatchObject({ kind: 'local', path: '/srv/x.git' });
    expect(local('file:///srv/%2e%2e/x.git')).toMatchObject({ kind: 'local', path: '/srv/../x.git' });
    // file:/x (no //) is the scp-like ssh address "file:/x"
    expect(local('file:/srv/x.git')).toMatchObject({ kind: 'network', protocol: 'ssh', host: 'file' });
    expect(local('git@github.com:o/r.git')).toMatchObject({ kind: 'network', protocol: 'ssh', host: 'github.com', port: 22 });
    expect(local('https://u:p@github.com/o/r.git')).toMatchObject({ kind: 'network', protocol: 'https', host: 'github.com', port: 443 });
    expect(local('ssh://git@[::1]:2222/r.git')).toMatchObject({ kind: 'network', protocol: 'ssh', host: '::1', port: 2222 });
  });

  it.each([
    ['ext::sh -c touch% /tmp/x', /git-remote-ext, which runs any command/],
    ['fd::3', /git-remote-fd/],
    ['FILE:///srv/x.git', /scheme "FILE"/],
    ['git://example.com/r.git', /scheme "git"/],
    ['~/x.git', /home directory/],
    ['-oProxyCommand=x:y', /not a host name/],
    ['ssh://-oProxyCommand=x/y', /not/],
  ])('refuses the push URL %j', (url, message) => {
    expect(() => classifyPushUrl('origin', url)).toThrow(message);
  });
});
