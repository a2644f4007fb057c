import { AppError, toAppError, type Logger } from '@mcp-fleet/kit';
import type { ImapFlow, ListResponse, MailboxObject } from 'imapflow';
import type * as Imapflow from 'imapflow';
import type { ServerSettings } from './account';
import { uidValidityChanged, type MessageRef } from './ids';
import { certificateError } from './tls';

export interface ImapPoolOptions {
  size: number;
  connectTimeoutMs: number;
  tlsInsecure: boolean;
  logger: Logger;
  /** Idle connections are logged out after this long. */
  idleMs?: number;
}

interface Pooled {
  client: ImapFlow;
  idleTimer?: NodeJS.Timeout;
  /** Served a call before: the server may have dropped it since. */
  used?: boolean;
}

/** The first command of a call found the connection gone; nothing was done, so the call may run again. */
class StaleConnection extends Error {
  constructor(override readonly cause: unknown) {
    super('stale IMAP connection');
  }
}

function isConnectionLoss(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === 'NoConnection' || code === 'EConnectionClosed' || code === 'ECONNRESET' || code === 'EPIPE';
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'ECONNRESET',
]);

/** Turns what imapflow and the socket throw into the fleet's errors; never echoes credentials. */
export function imapError(err: unknown, where: string): AppError {
  if (err instanceof AppError) return err;
  const untrusted = certificateError(err, 'IMAP', where);
  if (untrusted) return untrusted;
  const e = err as { code?: string; authenticationFailed?: boolean; serverResponseCode?: string; responseText?: string; message?: string };
  if (e?.authenticationFailed) {
    return new AppError(
      'UPSTREAM_ERROR',
      `The IMAP server at ${where} refused the login; check MAIL_USER and MAIL_PASSWORD (or the credentials in IMAP_URL).`,
      {
        cause: err,
      },
    );
  }
  if (e?.code && (UNREACHABLE.has(e.code) || e.code === 'NoConnection' || e.code === 'EConnectionClosed')) {
    return new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The IMAP server at ${where} is not reachable (${e.code}); check IMAP_URL and that the server runs.`,
      {
        cause: err,
        retryAfter: 5,
      },
    );
  }
  if (
    e?.serverResponseCode === 'NONEXISTENT' ||
    /doesn't exist|does not exist|no such mailbox|unknown mailbox/i.test(e?.responseText ?? '')
  ) {
    return new AppError('NOT_FOUND', 'The folder does not exist; GET /mail/labels lists the folders.', { cause: err });
  }
  if (e?.responseText) {
    return new AppError('UPSTREAM_ERROR', `The IMAP server at ${where} refused the command: ${e.responseText.slice(0, 300)}`, {
      cause: err,
    });
  }
  if (e?.code)
    return new AppError('UPSTREAM_ERROR', `The IMAP command failed at ${where} (${e.code}); the cause is in the service log.`, {
      cause: err,
    });
  return toAppError(err);
}

/**
 * A small pool of logged-in IMAP connections. Each call gets one connection to itself (IMAP has
 * one selected mailbox per connection), so calls run in parallel up to the pool size and queue
 * beyond it. Broken connections are dropped and replaced on the next call.
 */
export class ImapPool {
  private idle: Pooled[] = [];
  private open = 0;
  private waiters: { resolve: (p: Pooled) => void; reject: (e: unknown) => void }[] = [];
  private closed = false;
  /** Capabilities of the last login (X-GM-EXT-1 tells Gmail). */
  capabilities = new Set<string>();

  constructor(
    private readonly settings: ServerSettings,
    private readonly options: ImapPoolOptions,
  ) {}

  get where(): string {
    return this.settings.display;
  }

  get gmail(): boolean {
    return this.capabilities.has('X-GM-EXT-1');
  }

  private async connect(): Promise<Pooled> {
    const s = this.settings;
    // imapflow is loaded at the first connection: unconfigured, the service does not hold it
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ImapFlow } = require('imapflow') as typeof Imapflow;
    const client = new ImapFlow({
      host: s.host,
      port: s.port,
      secure: s.secure,
      auth: s.user ? { user: s.user, pass: s.password ?? '' } : undefined,
      logger: false,
      emitLogs: false,
      connectionTimeout: this.options.connectTimeoutMs,
      greetingTimeout: this.options.connectTimeoutMs,
      socketTimeout: 5 * 60_000,
      disableAutoIdle: true,
      tls: { rejectUnauthorized: !this.options.tlsInsecure },
    });
    // imapflow emits 'error' for socket faults; without a listener Node would crash the process.
    client.on('error', (err: Error & { code?: string }) =>
      this.options.logger.warn('IMAP connection error', { server: this.where, code: err.code, message: err.message }),
    );
    try {
      await client.connect();
    } catch (err) {
      client.close();
      throw imapError(err, this.where);
    }
    this.capabilities = new Set(client.capabilities.keys());
    return { client };
  }

  private async acquire(): Promise<Pooled> {
    if (this.closed) throw new AppError('UPSTREAM_UNAVAILABLE', 'mail-mcp is shutting down.');
    while (this.idle.length) {
      const p = this.idle.pop()!;
      clearTimeout(p.idleTimer);
      if (p.client.usable) return p;
      this.open -= 1;
      p.client.close();
    }
    if (this.open < this.options.size) {
      this.open += 1;
      try {
        return await this.connect();
      } catch (err) {
        this.open -= 1;
        this.wakeOne();
        throw err;
      }
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private wakeOne(): void {
    const w = this.waiters.shift();
    if (!w) return;
    this.acquire().then(w.resolve, w.reject);
  }

  private release(p: Pooled, broken: boolean): void {
    if (broken || this.closed || !p.client.usable) {
      this.open -= 1;
      p.client.close();
      this.wakeOne();
      return;
    }
    const w = this.waiters.shift();
    if (w) return w.resolve(p);
    p.idleTimer = setTimeout(() => {
      this.idle = this.idle.filter((x) => x !== p);
      this.open -= 1;
      p.client.logout().catch(() => p.client.close());
    }, this.options.idleMs ?? 60_000);
    p.idleTimer.unref();
    this.idle.push(p);
  }

  /**
   * Runs fn on a connection of its own; IMAP and socket errors come out as AppErrors. A pooled
   * connection the server has dropped meanwhile (timeout, mailbox deleted, restart) is replaced and
   * fn run again, but only when fn is idempotent or failed on its first, idempotent command.
   */
  async use<T>(fn: (client: ImapFlow) => Promise<T>, options: { idempotent?: boolean; signal?: AbortSignal } = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const p = await this.acquire();
      const reused = p.used === true;
      p.used = true;
      let broken = false;
      // A call that timed out or whose client left must not keep the connection busy: close it.
      const onAbort = () => {
        broken = true;
        p.client.close();
      };
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await fn(p.client);
      } catch (err) {
        broken = !p.client.usable || !(err instanceof AppError || (err as { responseText?: string }).responseText !== undefined);
        const stale = err instanceof StaleConnection || (options.idempotent === true && isConnectionLoss(err));
        if (stale && reused && attempt === 0) {
          broken = true;
          continue;
        }
        throw imapError(err instanceof StaleConnection ? err.cause : err, this.where);
      } finally {
        options.signal?.removeEventListener('abort', onAbort);
        this.release(p, broken);
      }
    }
  }

  /** Every folder (LIST); withCounts adds STATUS messages/unseen. */
  listFolders(withCounts = false, signal?: AbortSignal): Promise<ListResponse[]> {
    return this.use((c) => c.list(withCounts ? { statusQuery: { messages: true, unseen: true } } : undefined), {
      idempotent: true,
      signal,
    });
  }

  /** Selects a folder (read-only unless writing) for the duration of fn. */
  async inFolder<T>(
    folder: string,
    fn: (client: ImapFlow, mailbox: MailboxObject) => Promise<T>,
    write = false,
    signal?: AbortSignal,
  ): Promise<T> {
    return this.use(
      async (client) => {
        let lock;
        // imapflow skips SELECT when the folder is already selected: a NOOP then picks up changes made
        // by other sessions since, and finds out whether the server dropped the connection meanwhile.
        const current = client.mailbox ? client.mailbox.path : undefined;
        try {
          lock = await client.getMailboxLock(folder, { readOnly: !write });
          if (current === folder) {
            await client.noop();
            // Dovecot closes sessions whose selected folder was deleted ("BYE ... deleted").
            if (!client.usable || !client.mailbox) throw new StaleConnection(new Error('the selected folder went away'));
          }
        } catch (err) {
          lock?.release();
          if (err instanceof StaleConnection) throw err;
          if (isConnectionLoss(err) || !client.usable) throw new StaleConnection(err);
          const e = imapError(err, this.where);
          // A NO to SELECT/EXAMINE means the folder is missing or not selectable (\Noselect).
          if (e.code === 'NOT_FOUND' || (err as { responseText?: string }).responseText !== undefined) {
            throw new AppError('NOT_FOUND', `Folder "${folder}" does not exist; GET /mail/labels lists the folders.`, {
              details: { folder },
            });
          }
          throw e;
        }
        try {
          return await fn(client, client.mailbox as MailboxObject);
        } finally {
          lock.release();
        }
      },
      { signal },
    );
  }

  /** Checks that a message id's UIDVALIDITY still holds for the selected folder. */
  static checkValidity(ref: MessageRef, mailbox: MailboxObject): void {
    const now = mailbox.uidValidity.toString();
    if (now !== ref.uidValidity) throw uidValidityChanged(ref.folder, ref.uidValidity, now);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new AppError('UPSTREAM_UNAVAILABLE', 'mail-mcp is shutting down.'));
    const idle = this.idle.splice(0);
    await Promise.all(
      idle.map(async (p) => {
        clearTimeout(p.idleTimer);
        await p.client.logout().catch(() => p.client.close());
      }),
    );
  }
}
