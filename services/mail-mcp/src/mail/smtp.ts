import { AppError } from '@mcp-fleet/kit';
import type { Transporter } from 'nodemailer';
import type * as Nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { ServerSettings } from './account';
import { certificateError } from './tls';

const UNREACHABLE = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH']);

/** nodemailer's errors as the fleet's; server replies are kept (they explain refusals), credentials never appear in them. */
export function smtpError(err: unknown, where: string): AppError {
  if (err instanceof AppError) return err;
  const untrusted = certificateError(err, 'SMTP', where);
  if (untrusted) return untrusted;
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  if (e?.code === 'EAUTH') {
    return new AppError(
      'UPSTREAM_ERROR',
      `The SMTP server at ${where} refused the login; check MAIL_USER and MAIL_PASSWORD (or the credentials in SMTP_URL).`,
      {
        cause: err,
      },
    );
  }
  if (e?.code && UNREACHABLE.has(e.code)) {
    return new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The SMTP server at ${where} is not reachable (${e.code}); check SMTP_URL and that the server runs.`,
      {
        cause: err,
        retryAfter: 5,
      },
    );
  }
  const reply = (e?.response ?? '').replace(/\s+/g, ' ').slice(0, 300);
  if (e?.responseCode === 552 || e?.responseCode === 523) {
    return new AppError('PAYLOAD_TOO_LARGE', `The SMTP server at ${where} refused the message as too large: ${reply}`, { cause: err });
  }
  if (e?.code === 'EENVELOPE' || e?.code === 'EMESSAGE' || e?.responseCode) {
    return new AppError('UPSTREAM_ERROR', `The SMTP server at ${where} refused the message: ${reply || e?.message}`, { cause: err });
  }
  return new AppError('UPSTREAM_ERROR', `Sending through ${where} failed; the cause is in the service log.`, { cause: err });
}

export interface SendResult {
  accepted: string[];
  rejected: string[];
  response?: string;
}

/** A pooled SMTP transport: keeps a few connections open so consecutive sends skip the handshake and login. */
export class Sender {
  private readonly transport: Transporter<SMTPPool.SentMessageInfo>;

  constructor(
    private readonly settings: ServerSettings,
    options: { connectTimeoutMs: number; tlsInsecure: boolean; maxConnections?: number },
  ) {
    // nodemailer is loaded when sending is configured (a Sender made), not by the service's start
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nodemailer = require('nodemailer') as typeof Nodemailer;
    this.transport = nodemailer.createTransport({
      pool: true,
      maxConnections: options.maxConnections ?? 3,
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      ...(settings.user ? { auth: { user: settings.user, pass: settings.password ?? '' } } : {}),
      connectionTimeout: options.connectTimeoutMs,
      greetingTimeout: options.connectTimeoutMs,
      socketTimeout: 60_000,
      tls: { rejectUnauthorized: !options.tlsInsecure },
      logger: false,
      debug: false,
    });
  }

  get where(): string {
    return this.settings.display;
  }

  async send(raw: Buffer, envelope: { from: string; to: string[] }): Promise<SendResult> {
    try {
      const info = await this.transport.sendMail({ envelope, raw });
      const str = (list: unknown[] | undefined) =>
        (list ?? []).map((a) => (typeof a === 'string' ? a : (a as { address: string }).address));
      return {
        accepted: str(info.accepted),
        rejected: str(info.rejected),
        ...(info.response ? { response: String(info.response).slice(0, 300) } : {}),
      };
    } catch (err) {
      throw smtpError(err, this.where);
    }
  }

  async verify(): Promise<void> {
    try {
      await this.transport.verify();
    } catch (err) {
      throw smtpError(err, this.where);
    }
  }

  close(): void {
    this.transport.close();
  }
}
