import express from 'express';
import { createServiceApp, successEnvelope, type HealthCheck, type Logger, type ServiceApp, secretFilesFrom } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { SERVICE_ID, type Config } from './config';
import type { MailDeps } from './deps';
import { mailAccount } from './mail/account';
import { ImapPool } from './mail/imap';
import { Sender } from './mail/smtp';
import { createTools } from './tools';

export interface MailAppDeps {
  config: Config;
  logger: Logger;
  /** Process-level default metrics (tests that build several apps turn them off). */
  defaultMetrics?: boolean;
}

/** Probes are cached so the gateway's polling does not log in to the mail servers every few seconds. */
function cachedProbe(ttlMs: number, probe: () => Promise<unknown>): () => Promise<unknown> {
  let last: { at: number; result: Promise<unknown> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ttlMs) {
      const result = probe();
      last = { at: Date.now(), result };
      result.catch(() => (last = undefined));
    }
    return last.result;
  };
}

export async function createApp({ config, logger, defaultMetrics = true }: MailAppDeps): Promise<ServiceApp> {
  const account = mailAccount(config);
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const imap = account.imap
    ? new ImapPool(account.imap, {
        size: config.MAIL_POOL_SIZE,
        connectTimeoutMs: config.MAIL_CONNECT_TIMEOUT_MS,
        tlsInsecure: account.tlsInsecure,
        logger,
      })
    : undefined;
  const smtp = account.smtp
    ? new Sender(account.smtp, { connectTimeoutMs: config.MAIL_CONNECT_TIMEOUT_MS, tlsInsecure: account.tlsInsecure })
    : undefined;
  const deps: MailDeps = {
    config,
    logger,
    account,
    ws,
    imap,
    smtp,
    limits: {
      maxAttachmentBytes: config.MAIL_MAX_ATTACHMENT_BYTES,
      maxSendBytes: config.MAIL_MAX_SEND_BYTES,
      maxBodyBytes: config.MAIL_MAX_BODY_BYTES,
    },
  };
  logger.info(account.imap || account.smtp ? 'mail servers' : 'mail is not configured: set IMAP_URL and SMTP_URL', {
    imap: account.imap?.display ?? 'not configured',
    smtp: account.smtp?.display ?? 'not configured',
  });
  const notSet = (v: string) => () => {
    throw new Error(`mail is not configured: set ${v} and MAIL_USER/MAIL_PASSWORD (or credentials in the URL)`);
  };
  // Optional checks: an unconfigured or unreachable mail server leaves /health 200 ("degraded") and says why.
  const healthChecks: HealthCheck[] = [
    {
      name: 'imap',
      required: false,
      timeoutMs: 3000,
      check: imap
        ? cachedProbe(30_000, () =>
            imap.use(async (c) => (await c.noop(), { server: imap.where, gmail: imap.gmail }), { idempotent: true }),
          )
        : notSet('IMAP_URL'),
    },
    {
      name: 'smtp',
      required: false,
      timeoutMs: 3000,
      check: smtp ? cachedProbe(30_000, async () => (await smtp.verify(), { server: smtp.where })) : notSet('SMTP_URL'),
    },
  ];
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    defaultMetrics,
    healthChecks,
    extend: (app, kit) => {
      // The contract's generic dispatch: POST /tool/{tool_name} with the arguments as the body.
      app.post('/tool/:tool_name', express.json({ limit: config.BODY_LIMIT }), async (req, res) => {
        try {
          const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {};
          const result = await kit.callTool(String(req.params.tool_name), body, {
            requestId: res.locals.requestId,
            authorization: req.get('authorization'),
          });
          res.json(successEnvelope(SERVICE_ID, result));
        } catch (err) {
          kit.sendError(res, err);
        }
      });
    },
    routes: (r) => {
      r.tool('post', '/mail/search', 'mail_search');
      r.tool('post', '/mail/send', 'mail_send');
      r.tool('post', '/mail/forward', 'mail_forward');
      r.tool('get', '/mail/email/:email_id', 'mail_get');
      r.tool('get', '/mail/email/:email_id/attachments/:attachmentId', 'mail_get');
      r.tool('post', '/mail/count', 'mail_count');
      r.tool('get', '/mail/labels', 'mail_labels');
      r.tool('post', '/mail/labels', 'mail_label_create');
      r.tool('post', '/mail/labels/apply', 'mail_label_apply');
      r.tool('post', '/mail/move', 'mail_move');
    },
    onClose: async () => {
      smtp?.close();
      await imap?.close();
    },
  });
}
