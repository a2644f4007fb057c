import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needImap, type MailDeps } from '../deps';
import { countMail, filterShape } from '../mail/search';

export function mailCountTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_count',
    title: 'Count mail',
    description:
      'Count the messages of one folder (default INBOX) that match the same filters as mail_search (none: every message). ' +
      `With hasAttachment at most MAIL_SCAN_MAX (${deps.config.MAIL_SCAN_MAX}) messages are inspected and the answer says truncated: true beyond. Also served as POST /mail/count.`,
    input: z.object(filterShape).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: (filter, ctx) => countMail(needImap(deps), filter, deps.config.MAIL_SCAN_MAX, ctx.signal),
  });
}
