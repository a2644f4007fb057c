import { defineTool, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needImap, type MailDeps } from '../deps';
import { filterShape, searchMail } from '../mail/search';

export function mailSearchTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_search',
    title: 'Search mail',
    description:
      'Search one folder (default INBOX) by from, to, cc, subject, body, text anywhere, received since/before (by day), unread, flagged, ' +
      'has attachment and label (keyword, or Gmail label on Gmail); all given filters must match. Newest first (by arrival, i.e. UID). ' +
      'Paginated: limit 1-500 (default 50) with a cursor that stays valid while new mail arrives and until the folder’s UIDVALIDITY changes. ' +
      `Each hit is a summary (id, addresses, subject, dates, size, flags, labels, hasAttachments); mail_get reads one. hasAttachment inspects at most MAIL_SCAN_MAX (${deps.config.MAIL_SCAN_MAX}) messages per page. Also served as POST /mail/search.`,
    input: z.object({ ...filterShape, ...pageShape }).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ limit, cursor, ...filter }, ctx) =>
      searchMail(needImap(deps), filter, limit, cursor, deps.config.MAIL_SCAN_MAX, ctx.signal),
  });
}
