/**
 * The audit log as the console reads it (admins only): the newest lines of AUDIT_LOG_FILE (who, tool,
 * service, outcome, duration, transport, request id; never arguments), filtered, newest first.
 */
import { z } from 'zod';
import { openRegular, parseLine, tailLines } from './files';

export const auditQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(200).describe('Lines (1-1000, default 200).'),
    who: z.string().max(300).optional().describe('Only lines whose caller contains this text.'),
    tool: z.string().max(200).optional().describe('Only lines whose tool contains this text.'),
    outcome: z.string().max(64).optional().describe('ok, error (any failure), or one error code.'),
  })
  .strict();

export async function readAudit(
  file: string | undefined,
  q: z.output<typeof auditQuery>,
): Promise<{ file: string | null; entries: Record<string, unknown>[]; scanned: number }> {
  if (!file) return { file: null, entries: [], scanned: 0 };
  const handle = await openRegular(file);
  if (!handle) return { file, entries: [], scanned: 0 };
  try {
    const { lines } = await tailLines(handle);
    const has = (v: unknown, part: string | undefined) =>
      !part ||
      String(v ?? '')
        .toLowerCase()
        .includes(part.toLowerCase());
    const entries: Record<string, unknown>[] = [];
    for (let i = lines.length - 1; i >= 0 && entries.length < q.limit; i--) {
      const e = parseLine(lines[i]);
      const outcome = String(e.outcome ?? '');
      const outcomeOk = !q.outcome || (q.outcome === 'error' ? outcome !== 'ok' : outcome === q.outcome);
      if (outcomeOk && has(e.who, q.who) && has(e.tool, q.tool)) entries.push(e);
    }
    return { file, entries, scanned: lines.length };
  } finally {
    await handle.close();
  }
}
