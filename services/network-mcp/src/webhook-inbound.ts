import { randomUUID } from 'node:crypto';
import express, { type Express, type Request, type Response } from 'express';
import { AppError, successEnvelope, type KitHandle } from '@mcp-fleet/kit';
import type { OutboundClient } from '@mcp-fleet/outbound';
import type { Config } from './config';
import { DELIVERY_HEADER, EVENT_HEADER, sign, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify, WEBHOOK_ID_HEADER } from './signing';
import type { DeliveryStatus, WebhookStore } from './webhook-store';

export const EVENT_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const DEFAULT_EVENT = 'message';
export interface InboundDeps {
  config: Config;
  store: WebhookStore;
  client: OutboundClient;
}

const REASONS: Record<string, string> = {
  'missing-signature': `no ${SIGNATURE_HEADER} header`,
  'missing-timestamp': `no valid ${TIMESTAMP_HEADER} header (unix seconds)`,
  'stale-timestamp': 'the timestamp is outside the allowed window',
  'bad-signature': 'the signature does not match the body',
  replayed: 'this signature was already used',
};

/** POST /webhooks/{webhook_id}: verify, forward with our own signature, log the delivery. */
export function registerInboundWebhooks(app: Express, kit: KitHandle, deps: InboundDeps): void {
  const { config, store, client } = deps;
  // A signature stays valid for the tolerance either side of its timestamp: remembered that long twice over.
  const replayMs = config.WEBHOOK_TOLERANCE_SECONDS * 1000 * 2;

  const handle = async (req: Request, res: Response) => {
    const started = performance.now();
    const id = String(req.params.webhook_id);
    const found = await store.getWithSecret(id);
    if (!found) throw new AppError('NOT_FOUND', `No webhook ${id}; GET /webhooks lists the registered ones.`);
    const { webhook, secret } = found;
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const eventHeader = req.get(EVENT_HEADER);
    const event = eventHeader && EVENT_NAME.test(eventHeader) ? eventHeader : DEFAULT_EVENT;
    const deliveryId = randomUUID();
    const base = { deliveryId, webhookId: id, event, receivedAt: new Date().toISOString(), requestBytes: body.length };
    const record = (status: DeliveryStatus, extra: { reason?: string; targetStatus?: number } = {}) =>
      store.log({ ...base, status, ...extra, durationMs: Math.round(performance.now() - started) });

    if (secret !== null) {
      const signature = req.get(SIGNATURE_HEADER);
      const check = verify(secret, { signature, timestamp: req.get(TIMESTAMP_HEADER) }, body, config.WEBHOOK_TOLERANCE_SECONDS);
      const reason = !check.ok
        ? check.reason
        : (await store.rememberSignature(`${id}:${signature}`, Date.now() + replayMs))
          ? undefined
          : 'replayed';
      if (reason) {
        await record('rejected', { reason });
        kit.logger.info('webhook rejected', { webhookId: id, deliveryId, reason });
        throw new AppError(
          'UNAUTHORIZED',
          `Webhook signature refused: ${REASONS[reason]}. Send ${SIGNATURE_HEADER}: sha256=HMAC-SHA256(secret, "<${TIMESTAMP_HEADER}>.<raw body>") in hex, with a fresh ${TIMESTAMP_HEADER}.`,
          { details: { deliveryId, reason } },
        );
      }
    }

    if (!webhook.events.includes('*') && !webhook.events.includes(event)) {
      await record('skipped', { reason: 'event not subscribed' });
      res.json(successEnvelope(kit.service, { deliveryId, status: 'skipped', reason: `event "${event}" is not subscribed` }));
      return;
    }

    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      'content-type': req.get('content-type') ?? 'application/octet-stream',
      [EVENT_HEADER]: event,
      [DELIVERY_HEADER]: deliveryId,
      [WEBHOOK_ID_HEADER]: id,
      [TIMESTAMP_HEADER]: timestamp,
      ...(secret !== null ? { [SIGNATURE_HEADER]: sign(secret, timestamp, body) } : {}),
    };
    let targetStatus: number;
    try {
      const forwarded = await client.request(webhook.targetUrl, {
        method: 'POST',
        headers,
        body,
        timeoutMs: config.WEBHOOK_FORWARD_TIMEOUT_MS,
        followRedirects: false,
        maxResponseBytes: 64 * 1024,
      });
      targetStatus = forwarded.status;
    } catch (err) {
      const appErr = err instanceof AppError ? err : new AppError('UPSTREAM_ERROR', 'Forwarding failed.', { cause: err });
      await record('failed', { reason: appErr.code });
      kit.logger.warn('webhook forward failed', { webhookId: id, deliveryId, code: appErr.code });
      throw new AppError(
        appErr.code === 'TIMEOUT' ? 'TIMEOUT' : 'UPSTREAM_ERROR',
        `The event was received but could not be forwarded to the webhook target: ${appErr.message}`,
        { details: { deliveryId, code: appErr.code } },
      );
    }
    if (targetStatus < 200 || targetStatus > 299) {
      await record('failed', { reason: `target answered ${targetStatus}`, targetStatus });
      throw new AppError('UPSTREAM_ERROR', `The webhook target answered HTTP ${targetStatus}; the delivery is logged as failed.`, {
        details: { deliveryId, targetStatus },
      });
    }
    await record('delivered', { targetStatus });
    kit.logger.info('webhook delivered', { webhookId: id, deliveryId, targetStatus });
    res.json(successEnvelope(kit.service, { deliveryId, status: 'delivered', targetStatus }));
  };

  app.post('/webhooks/:webhook_id', express.raw({ type: () => true, limit: config.BODY_LIMIT }), async (req, res) => {
    try {
      await handle(req, res);
    } catch (err) {
      kit.sendError(res, err);
    }
  });
}
