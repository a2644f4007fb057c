import { AppError } from '@mcp-fleet/kit';
import type { Config } from '../config';

export interface ServerSettings {
  host: string;
  port: number;
  /** TLS from the first byte (imaps/smtps); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  /** Where it is, for logs and health: never the credentials. */
  display: string;
}

export interface MailAccount {
  imap?: ServerSettings;
  smtp?: ServerSettings;
  /** Default sender: MAIL_FROM, else the login when it is an address. */
  from?: string;
  tlsInsecure: boolean;
}

const DEFAULT_PORTS: Record<string, number> = { imap: 143, imaps: 993, smtp: 587, smtps: 465 };

function parseServer(raw: string | undefined, config: Config): ServerSettings | undefined {
  if (!raw) return undefined;
  const u = new URL(raw);
  const scheme = u.protocol.replace(/:$/, '');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port ? Number(u.port) : DEFAULT_PORTS[scheme];
  const user = u.username ? decodeURIComponent(u.username) : config.MAIL_USER;
  const password = u.password ? decodeURIComponent(u.password) : config.MAIL_PASSWORD;
  return { host, port, secure: scheme.endsWith('s'), user, password, display: `${scheme}://${u.host}` };
}

export function mailAccount(config: Config): MailAccount {
  const imap = parseServer(config.IMAP_URL, config);
  const smtp = parseServer(config.SMTP_URL, config);
  const login = smtp?.user ?? imap?.user;
  const from = config.MAIL_FROM ?? (login && /^[^\s@<>]+@[^\s@<>]+$/.test(login) ? login : undefined);
  return { imap, smtp, from, tlsInsecure: config.MAIL_TLS_INSECURE };
}

const CREDENTIALS = 'MAIL_USER and MAIL_PASSWORD (or user:password@ in the URL)';

export function notConfigured(what: 'imap' | 'smtp'): AppError {
  return what === 'imap'
    ? new AppError(
        'NOT_CONFIGURED',
        `Mail reading is not configured: set IMAP_URL (imap://host:143 or imaps://host:993) and ${CREDENTIALS} for mail-mcp, then restart it.`,
        { details: { missing: ['IMAP_URL'], variables: ['IMAP_URL', 'MAIL_USER', 'MAIL_PASSWORD'] } },
      )
    : new AppError(
        'NOT_CONFIGURED',
        `Mail sending is not configured: set SMTP_URL (smtp://host:587 or smtps://host:465) and ${CREDENTIALS} for mail-mcp, then restart it.`,
        { details: { missing: ['SMTP_URL'], variables: ['SMTP_URL', 'MAIL_USER', 'MAIL_PASSWORD', 'MAIL_FROM'] } },
      );
}
