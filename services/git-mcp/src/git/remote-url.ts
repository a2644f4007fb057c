import { AppError } from '@mcp-fleet/kit';
import type { PushProtocol } from '../config';

/**
 * What a push URL names, read the way git reads it (transport.c, connect.c), so the check and
 * git agree: a remote helper (`<name>::<address>`, refused: ext:: runs any command), a URL
 * (`scheme://...`; file:// is a local path whatever its host, %XX decoded), an scp-like ssh
 * address (`[user@]host:path`, a colon before any slash: so `file:/x` is the ssh host "file"),
 * or else a local path, relative to the repository's top. Whatever this misreads still fails
 * closed: git runs in a sandbox that holds only the targets approved here.
 */
export type PushTarget =
  | { kind: 'local'; url: string; protocol: 'file'; path: string }
  | { kind: 'network'; url: string; protocol: Exclude<PushProtocol, 'file'>; host: string; port: number };

const SCHEME_PORTS: Record<string, [Exclude<PushProtocol, 'file'>, number]> = {
  https: ['https', 443],
  http: ['http', 80],
  ssh: ['ssh', 22],
  'git+ssh': ['ssh', 22],
  'ssh+git': ['ssh', 22],
};

/** Credentials in a URL never reach a message. */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

function refused(remote: string, url: string, why: string): AppError {
  return new AppError('FORBIDDEN', `Remote "${remote}" pushes to ${JSON.stringify(maskUrl(url))}, which git-mcp does not push to: ${why}`, {
    details: [{ path: 'remote', message: why }],
  });
}

/** git's url_decode: every %XX, nothing else (invalid escapes stay as written). */
export function percentDecode(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(text[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A host as git passes it on: no leading '-' (an option to ssh), no brackets left, no spaces. */
function checkHost(remote: string, url: string, host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === '' || bare.startsWith('-') || /[\s/\\@[\]]/.test(bare)) {
    throw refused(remote, url, `"${host}" is not a host name or address`);
  }
  return bare.toLowerCase();
}

export function classifyPushUrl(remote: string, url: string): PushTarget {
  if (url === '' || url.includes('\0') || /[\n\r]/.test(url)) throw refused(remote, url, 'it is empty or holds control characters');
  const helper = /^([A-Za-z0-9+.-]+)::/.exec(url);
  if (helper) {
    throw refused(
      remote,
      url,
      `"${helper[1]}::" makes git run the remote helper git-remote-${helper[1]}${helper[1] === 'ext' ? ', which runs any command' : ''}; name a repository by path, file://, https:// or ssh`,
    );
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    // git compares schemes as written: FILE:// or HTTPS:// would be the remote helper of that name.
    if (scheme[1] === 'file') {
      const rest = url.slice('file://'.length);
      const slash = rest.indexOf('/');
      if (slash < 0) throw refused(remote, url, 'a file:// URL needs an absolute path');
      const local = percentDecode(rest.slice(slash));
      if (local.includes('\0')) throw refused(remote, url, 'its path holds a NUL byte');
      return { kind: 'local', url, protocol: 'file', path: local };
    }
    const known = SCHEME_PORTS[scheme[1]];
    if (!known) throw refused(remote, url, `the scheme "${scheme[1]}" is not one of https, http, ssh or file`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refused(remote, url, 'it is not a valid URL');
    }
    const [protocol, defaultPort] = known;
    const host = checkHost(remote, url, parsed.hostname);
    return { kind: 'network', url, protocol, host, port: parsed.port ? Number(parsed.port) : defaultPort };
  }
  // git's url_is_local_not_ssh: a colon before any slash is ssh's scp-like "[user@]host:path".
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon >= 0 && (slash < 0 || colon < slash)) {
    let hostPart = url.slice(0, colon);
    if (url.startsWith('[') || url.includes('@[')) {
      const close = url.indexOf(']');
      if (close < 0 || url[close + 1] !== ':') throw refused(remote, url, 'its [host] is not closed');
      hostPart = url.slice(0, close + 1);
    }
    const at = hostPart.lastIndexOf('@');
    const host = checkHost(remote, url, at >= 0 ? hostPart.slice(at + 1) : hostPart);
    return { kind: 'network', url, protocol: 'ssh', host, port: 22 };
  }
  if (url.startsWith('~'))
    throw refused(remote, url, 'a path starting with ~ lies in a home directory; use a path inside the workspace roots');
  return { kind: 'local', url, protocol: 'file', path: url };
}
