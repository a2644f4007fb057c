/**
 * Real mail servers for tests and benchmarks: Dovecot (IMAP + LMTP, Debian's dovecot-imapd and
 * dovecot-lmtpd) on free loopback ports with one passwd-file user and a temporary Maildir, and an
 * SMTP server (the npm smtp-server) that checks the same credentials and hands every message to
 * Dovecot's LMTP, so what is sent over SMTP is delivered into the mailbox by Dovecot itself.
 *
 * Why smtp-server + LMTP and not Postfix: Postfix wants its queue, chroot and several daemons set
 * up under root, takes seconds to start and delivers asynchronously through its queue; smtp-server
 * starts in milliseconds in-process, and LMTP answers only after Dovecot has stored the message,
 * so a test can search for a message as soon as its send returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { localhostCert } from './support';
import { freePort } from './index';

export { freePort };

export const DOVECOT_LMTP = '/usr/lib/dovecot/lmtp';

export interface MailServers {
  user: string;
  password: string;
  /** imap://127.0.0.1:<port> (no credentials in it) */
  imapUrl: string;
  /** smtp://127.0.0.1:<port> (no credentials in it) */
  smtpUrl: string;
  imapPort: number;
  smtpPort: number;
  lmtpPort: number;
  /** The user's Maildir (new/, cur/, tmp/ and .Folder subdirectories). */
  maildir: string;
  /** Messages the SMTP server accepted (envelope and size), newest last. */
  received: { from: string; to: string[]; size: number }[];
  /** With `tls`: imaps://127.0.0.1:<port> and smtps://127.0.0.1:<port> (TLS from the first byte). */
  imapsUrl?: string;
  smtpsUrl?: string;
  /** With `tls`: the self-signed certificate (PEM) both servers present, for 127.0.0.1. */
  certPem?: string;
  /** Dovecot's log (login lines say whether the session used TLS). */
  logFile: string;
  /** Files messages straight into the Maildir (fast bulk fill; Dovecot indexes them on next access). */
  fillMaildir(messages: Iterable<string | Buffer>, folder?: string): number;
  stop(): Promise<void>;
}

export interface MailServerOptions {
  user?: string;
  password?: string;
  /** Largest message the SMTP server accepts (SIZE), bytes. */
  smtpMaxBytes?: number;
  /**
   * TLS with a self-signed certificate for localhost and 127.0.0.1 (localhostCert): Dovecot offers STARTTLS on the
   * IMAP port and listens for imaps, the SMTP server offers STARTTLS and listens for smtps too.
   */
  tls?: boolean;
}

function waitForPort(port: number, timeoutMs: number, failed: () => string | undefined): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const problem = failed();
      if (problem) return reject(new Error(problem));
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > until) reject(new Error(`dovecot did not open port ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** Dovecot's processes run as an existing unprivileged account: dovecot/dovenull as root, else the current user. */
function accounts(): { internal: string; login: string; uid: number; gid: number; root: boolean } {
  const me = os.userInfo();
  if (me.uid !== 0) return { internal: me.username, login: me.username, uid: me.uid, gid: me.gid, root: false };
  const passwd = fs.readFileSync('/etc/passwd', 'utf8');
  const find = (name: string) => passwd.split('\n').find((l) => l.startsWith(`${name}:`));
  const dovecot = find('dovecot');
  const dovenull = find('dovenull');
  if (!dovecot || !dovenull) throw new Error('the dovecot and dovenull accounts are missing; reinstall dovecot-core');
  const [, , uid, gid] = dovecot.split(':');
  return { internal: 'dovecot', login: 'dovenull', uid: Number(uid), gid: Number(gid), root: true };
}

let maildirSeq = 0;

export async function startMailServers(options: MailServerOptions = {}): Promise<MailServers> {
  const user = options.user ?? 'tester@example.test';
  const password = options.password ?? `pw-${randomBytes(6).toString('hex')}`;
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fleet-dovecot-')));
  fs.chmodSync(base, 0o755);
  const acct = accounts();
  const home = path.join(base, 'mail', user);
  const maildir = path.join(home, 'Maildir');
  for (const d of ['new', 'cur', 'tmp']) fs.mkdirSync(path.join(maildir, d), { recursive: true });
  fs.mkdirSync(path.join(base, 'run'), { recursive: true });
  fs.mkdirSync(path.join(base, 'state'), { recursive: true });
  if (acct.root) fs.chownSync(path.join(base, 'state'), acct.uid, acct.gid);
  const chownTree = (dir: string) => {
    if (!acct.root) return;
    fs.chownSync(dir, acct.uid, acct.gid);
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) chownTree(p);
      else fs.chownSync(p, acct.uid, acct.gid);
    }
  };
  chownTree(path.join(base, 'mail'));
  const passwdFile = path.join(base, 'passwd');
  fs.writeFileSync(passwdFile, `${user}:{PLAIN}${password}:${acct.uid}:${acct.gid}::${home}::\n`, { mode: 0o644 });
  const [imapPort, lmtpPort] = [await freePort(), await freePort()];
  const imapsPort = options.tls ? await freePort() : 0;
  const certFile = path.join(base, 'cert.pem');
  const keyFile = path.join(base, 'key.pem');
  if (options.tls) {
    const pems = localhostCert(2);
    fs.writeFileSync(keyFile, pems.key, { mode: 0o600 });
    fs.writeFileSync(certFile, pems.cert);
  }
  const sslConf = options.tls ? `ssl = yes\nssl_cert = <${certFile}\nssl_key = <${keyFile}` : 'ssl = no';
  const conf = path.join(base, 'dovecot.conf');
  fs.writeFileSync(
    conf,
    `base_dir = ${base}/run
state_dir = ${base}/state
log_path = ${base}/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
${sslConf}
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${acct.internal}
default_internal_group = ${acct.root ? 'dovecot' : os.userInfo().username}
default_login_user = ${acct.login}
first_valid_uid = ${acct.uid}
last_valid_uid = ${acct.uid}
mail_location = maildir:~/Maildir
mail_uid = ${acct.uid}
mail_gid = ${acct.gid}
mail_fsync = never
maildir_very_dirty_syncs = yes
lmtp_save_to_detail_mailbox = no
imap_capability = +UIDPLUS MOVE
namespace inbox {
  inbox = yes
  separator = /
  mailbox Trash {
    special_use = \\Trash
    auto = create
  }
  mailbox Sent {
    special_use = \\Sent
    auto = create
  }
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${passwdFile}
}
userdb {
  driver = passwd-file
  args = username_format=%u ${passwdFile}
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${imapPort}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${imapsPort}
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = ${lmtpPort}
  }
}
service anvil {
  chroot =
}
service imap-hibernate {
  unix_listener imap-hibernate {
    mode = 0666
  }
}
`,
  );
  const child: ChildProcess = spawn('dovecot', ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited: string | undefined;
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.once('exit', (code, signal) => (exited = `dovecot exited (${code ?? signal}): ${stderr.trim()} ${readLog(base)}`));
  try {
    await waitForPort(imapPort, 15_000, () => exited);
    await waitForPort(lmtpPort, 5_000, () => exited);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }

  const lmtp = nodemailer.createTransport({
    host: '127.0.0.1',
    port: lmtpPort,
    lmtp: true,
    ignoreTLS: true,
    pool: true,
    maxConnections: 4,
  });
  const received: MailServers['received'] = [];
  const smtpOptions: ConstructorParameters<typeof SMTPServer>[0] = {
    authOptional: false,
    allowInsecureAuth: true,
    ...(options.tls ? { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) } : { disabledCommands: ['STARTTLS'] }),
    size: options.smtpMaxBytes ?? 50 * 1024 * 1024,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) cb(null, { user });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          cb(Object.assign(new Error('Message exceeds the size limit'), { responseCode: 552 }));
          return;
        }
        const raw = Buffer.concat(chunks);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        // Every local recipient is the test user; other recipients are accepted and dropped (no relay).
        const to = session.envelope.rcptTo.map((r) => r.address);
        received.push({ from, to, size: raw.length });
        const local = to.filter((a) => a.toLowerCase() === user.toLowerCase());
        if (local.length === 0) return cb(null);
        lmtp.sendMail({ envelope: { from, to: [user] }, raw }).then(
          () => cb(null),
          (err: Error) => cb(err),
        );
      });
    },
  };
  const listenOn = async (server: SMTPServer): Promise<number> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return (server.server.address() as net.AddressInfo).port;
  };
  const smtp = new SMTPServer(smtpOptions);
  const smtps = options.tls ? new SMTPServer({ ...smtpOptions, secure: true }) : undefined;
  const smtpPort = await listenOn(smtp);
  const smtpsPort = smtps ? await listenOn(smtps) : 0;

  const fillMaildir = (messages: Iterable<string | Buffer>, folder?: string): number => {
    const dir = folder ? path.join(maildir, `.${folder}`) : maildir;
    for (const d of ['new', 'cur', 'tmp']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    const now = Math.floor(Date.now() / 1000);
    let n = 0;
    for (const m of messages) {
      // Maildir names: time.unique.host; ",S=<size>" lets Dovecot skip a stat.
      const size = typeof m === 'string' ? Buffer.byteLength(m) : m.length;
      const name = `${now}.M${++maildirSeq}P${process.pid}Q${n}.fill,S=${size}:2,`;
      fs.writeFileSync(path.join(dir, 'cur', name), m);
      n += 1;
    }
    chownTree(dir);
    return n;
  };

  return {
    user,
    password,
    imapUrl: `imap://127.0.0.1:${imapPort}`,
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    ...(options.tls
      ? {
          imapsUrl: `imaps://127.0.0.1:${imapsPort}`,
          smtpsUrl: `smtps://127.0.0.1:${smtpsPort}`,
          certPem: fs.readFileSync(certFile, 'utf8'),
        }
      : {}),
    logFile: path.join(base, 'dovecot.log'),
    imapPort,
    smtpPort,
    lmtpPort,
    maildir,
    received,
    fillMaildir,
    stop: async () => {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      if (smtps) await new Promise<void>((resolve) => smtps.close(() => resolve()));
      lmtp.close();
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await gone;
        clearTimeout(timer);
      }
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

/** A logged-in imapflow client on the test server (the caller logs it out). */
export async function imapClient(servers: MailServers): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: '127.0.0.1',
    port: servers.imapPort,
    secure: false,
    auth: { user: servers.user, pass: servers.password },
    logger: false,
    // The test servers' certificate is self-signed (tls option).
    tls: { rejectUnauthorized: false },
  });
  await client.connect();
  return client;
}

/** A pooled nodemailer transport that logs in to the test SMTP server (the caller closes it). */
export function smtpTransport(servers: MailServers) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: servers.smtpPort,
    auth: { user: servers.user, pass: servers.password },
    pool: true,
    maxConnections: 3,
    ignoreTLS: true,
  });
}

function readLog(base: string): string {
  try {
    return fs.readFileSync(path.join(base, 'dovecot.log'), 'utf8').split('\n').slice(-5).join(' | ');
  } catch {
    return '';
  }
}
