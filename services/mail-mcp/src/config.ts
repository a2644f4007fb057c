import { baseEnvShape, int, bool, csv, loadConfig, unsetIfEmpty, type Env, secretFilesEnvShape } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'mail-mcp';

const MiB = 1024 * 1024;
const bytes = (fallback: number, max: number) => int(fallback, 1024, max);

const mailUrl = (schemes: string[]) =>
  unsetIfEmpty(
    z
      .string()
      .trim()
      .refine(
        (v) => {
          try {
            return schemes.includes(new URL(v).protocol.replace(/:$/, ''));
          } catch {
            return false;
          }
        },
        `a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`,
      ),
  );

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('4mb').describe(
    'Largest accepted request body (PAYLOAD_TOO_LARGE above it); mail text and HTML travel in it, attachments come from WORKSPACE_ROOTS.',
  ),
  // Secrets (for the secrets UI): the URLs may carry user:password@.
  IMAP_URL: mailUrl(['imap', 'imaps']).meta({
    secret: true,
    description:
      'Incoming mail server, imap://host:143 (STARTTLS when offered) or imaps://host:993; may carry user:password@. Unset: the reading tools answer NOT_CONFIGURED.',
  }),
  SMTP_URL: mailUrl(['smtp', 'smtps']).meta({
    secret: true,
    description:
      'Outgoing mail server, smtp://host:587 (STARTTLS when offered) or smtps://host:465; may carry user:password@. Unset: mail_send and mail_forward answer NOT_CONFIGURED.',
  }),
  MAIL_USER: unsetIfEmpty(z.string().max(512)).describe('Login for both servers when their URL carries none.'),
  MAIL_PASSWORD: unsetIfEmpty(z.string().max(1024)).describe(
    'Password for both servers when their URL carries none. Never logged or shown.',
  ),
  MAIL_FROM: unsetIfEmpty(z.string().max(512)).describe(
    'Default sender ("Name <address>" or an address); defaults to the login when that is an address.',
  ),
  MAIL_SENT_FOLDER: unsetIfEmpty(z.string().max(512)).describe(
    'When set, a copy of every sent or forwarded message is appended to this IMAP folder (e.g. Sent). Unset: no copy (Gmail keeps one itself).',
  ),
  MAIL_TLS_INSECURE: bool(false).describe(
    'Accept self-signed or otherwise unverifiable TLS certificates from the mail servers (test servers only).',
  ),
  MAIL_POOL_SIZE: int(3, 1, 16).describe('IMAP connections kept open at most; calls beyond it wait.'),
  MAIL_CONNECT_TIMEOUT_MS: int(10_000, 100, 120_000).describe(
    'Time limit to connect and log in to a mail server (UPSTREAM_UNAVAILABLE above it).',
  ),
  MAIL_MAX_MESSAGE_BYTES: bytes(25 * MiB, 512 * MiB).describe(
    'Largest stored message mail_get and mail_forward read (PAYLOAD_TOO_LARGE above it).',
  ),
  MAIL_MAX_ATTACHMENT_BYTES: bytes(10 * MiB, 256 * MiB).describe(
    'Largest single attachment sent, or returned by mail_get with attachmentId (PAYLOAD_TOO_LARGE above it).',
  ),
  MAIL_MAX_SEND_BYTES: bytes(25 * MiB, 512 * MiB).describe(
    'Largest outgoing message, all attachments included (PAYLOAD_TOO_LARGE above it).',
  ),
  MAIL_MAX_BODY_BYTES: bytes(2 * MiB, 64 * MiB).describe('Largest text or HTML body a caller may send (PAYLOAD_TOO_LARGE above it).'),
  MAIL_MAX_TEXT_CHARS: int(200_000, 1000, 10_000_000).describe(
    'mail_get cuts text and HTML longer than this many characters and says truncated: true.',
  ),
  MAIL_SCAN_MAX: int(20_000, 100, 1_000_000).describe(
    'Most candidate messages one search or count inspects for hasAttachment (truncated: true beyond).',
  ),
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories attachments may be read from (comma-separated); nothing outside them is sent.',
  ),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
