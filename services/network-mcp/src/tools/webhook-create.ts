import { AppError, defineTool } from '@mcp-fleet/kit';
import { parseOutboundUrl } from '@mcp-fleet/outbound';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';
import { generateSecret, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../signing';
import { EVENT_NAME } from '../webhook-inbound';
import { urlField } from './shared';

export function webhookCreateTool({ config, client, store }: NetworkDeps) {
  return defineTool({
    name: 'webhook_create',
    title: 'Create webhook',
    description:
      `Register a webhook: events POSTed to /webhooks/{webhook_id} are verified (when it has a secret), forwarded to targetUrl ` +
      `with a fresh HMAC-SHA256 signature (${SIGNATURE_HEADER}, ${TIMESTAMP_HEADER}) and logged. A secret is generated unless ` +
      `one is given or signed is false; a generated secret is returned once, here, and never again. Definitions persist across ` +
      `restarts; at most ${config.WEBHOOK_MAX} exist at once. The target must be allowed by the outbound policy.`,
    input: z
      .object({
        targetUrl: urlField.describe('Where events are forwarded (http or https; checked by the outbound policy on every delivery).'),
        events: z
          .array(z.string().regex(EVENT_NAME, 'letters, digits, _ . : - (1-64 chars)').or(z.literal('*')))
          .min(1)
          .max(50)
          .default(['*'])
          .describe('Event names (sent in X-Fleet-Event) to forward; "*" forwards every event.'),
        secret: z.string().min(16).max(256).optional().describe('Shared HMAC secret (16-256 chars); generated when omitted.'),
        signed: z.boolean().default(true).describe('false: no secret, inbound events are not verified and forwards are unsigned.'),
        description: z.string().max(500).optional().describe('Free text shown in listings.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      if (!args.signed && args.secret !== undefined) {
        throw new AppError('VALIDATION_ERROR', 'signed is false but a secret was given; drop one of them.', {
          details: [{ path: 'secret', message: 'conflicts with signed: false' }],
        });
      }
      const url = parseOutboundUrl(args.targetUrl, 'targetUrl');
      // Literal private IPs and metadata names are refused now; names are resolved and checked on each delivery.
      client.policy.assertHost(url.hostname);
      if ((await store.count()) >= config.WEBHOOK_MAX) {
        throw new AppError('CONFLICT', `There are already ${config.WEBHOOK_MAX} webhooks (WEBHOOK_MAX); delete one first.`);
      }
      const generated = args.signed && args.secret === undefined ? generateSecret() : undefined;
      const secret = args.signed ? (args.secret ?? generated!) : null;
      const webhook = await store.create({ targetUrl: url.href, events: [...new Set(args.events)], description: args.description, secret });
      return {
        webhook,
        inboundPath: `/webhooks/${webhook.id}`,
        ...(generated ? { secret: generated, secretNote: 'Store this secret now: it is not shown again.' } : {}),
      };
    },
  });
}
