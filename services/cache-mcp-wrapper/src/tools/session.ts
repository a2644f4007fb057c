import { randomBytes } from 'node:crypto';
import { actionInput, AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { boundedJson, serialize, ttlMs, type Keyspace } from '../keyspace';
import type { KvStore } from '../store/kv-store';

export interface SessionToolDeps {
  store: KvStore;
  keyspace: Keyspace;
  maxValueBytes: number;
}

/** What is stored under `<ns>:session:<id>`. */
interface SessionRecord {
  data: unknown;
  ttlSeconds: number;
  sliding: boolean;
  createdAt: string;
  updatedAt: string;
}

const MAX_SESSION_TTL = 30 * 24 * 3600;
const sessionId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,128}$/, 'a session id as returned by create')
  .describe('Session id returned by create.');
const sessionTtl = z.number().positive().max(MAX_SESSION_TTL).describe('Session lifetime in seconds (fractions allowed; at most 30 days).');
const sessionData = boundedJson().describe('Any JSON value; the stored session is capped at CACHE_MAX_VALUE_BYTES (default 512 KiB).');

export const sessionInput = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('create'),
      data: sessionData.default({}),
      ttlSeconds: sessionTtl.default(3600),
      sliding: z.boolean().default(true).describe('Every read and update restarts the TTL (default true).'),
    })
    .strict()
    .describe('create: start a session with a random id.'),
  z
    .object({ action: z.literal('read'), sessionId })
    .strict()
    .describe('read: the session data (extends a sliding session).'),
  z
    .object({
      action: z.literal('update'),
      sessionId,
      data: sessionData,
      merge: z.boolean().default(false).describe('Shallow-merge object data into the stored object instead of replacing it.'),
      ttlSeconds: sessionTtl.optional().describe('New lifetime; restarts the TTL even for non-sliding sessions.'),
    })
    .strict()
    .describe('update: replace (or merge) the data; extends a sliding session.'),
  z
    .object({ action: z.literal('delete'), sessionId })
    .strict()
    .describe('delete: end the session.'),
  z
    .object({
      action: z.literal('list'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Sessions per page (1-1000, default 100).'),
      cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
    })
    .strict()
    .describe('list: live sessions (ids and timestamps, not data); does not extend them.'),
]);

export type SessionInput = z.output<typeof sessionInput>;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function notFound(id: string): AppError {
  return new AppError('NOT_FOUND', `No session ${id}; it may have expired or been deleted. Create a new one.`);
}

function parseRecord(text: string | null): SessionRecord | undefined {
  if (text === null) return undefined;
  try {
    const r = JSON.parse(text) as SessionRecord;
    return isPlainObject(r) && typeof r.ttlSeconds === 'number' ? r : undefined;
  } catch {
    return undefined;
  }
}

export function createSessionTool({ store, keyspace, maxValueBytes }: SessionToolDeps) {
  const view = (id: string, r: SessionRecord, ttlLeftMs: number, withData: boolean) => ({
    sessionId: id,
    ...(withData ? { data: r.data } : {}),
    ttlSeconds: r.ttlSeconds,
    sliding: r.sliding,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...(ttlLeftMs >= 0 ? { expiresAt: new Date(Date.now() + ttlLeftMs).toISOString() } : {}),
  });

  const handle = async (args: SessionInput): Promise<Record<string, unknown>> => {
    switch (args.action) {
      case 'create': {
        const id = randomBytes(24).toString('base64url');
        const now = new Date().toISOString();
        const record: SessionRecord = {
          data: args.data,
          ttlSeconds: args.ttlSeconds,
          sliding: args.sliding,
          createdAt: now,
          updatedAt: now,
        };
        const stored = await store.set(keyspace.sessionKey(id), serialize(record, maxValueBytes, 'session'), {
          ttlMs: ttlMs(args.ttlSeconds),
          nx: true,
        });
        if (!stored) throw new AppError('CONFLICT', 'A session id collided; create again.');
        return view(id, record, ttlMs(args.ttlSeconds), true);
      }
      case 'read': {
        const key = keyspace.sessionKey(args.sessionId);
        const record = parseRecord(await store.get(key));
        if (!record) throw notFound(args.sessionId);
        if (record.sliding) {
          if (!(await store.pexpire(key, ttlMs(record.ttlSeconds)))) throw notFound(args.sessionId);
          return view(args.sessionId, record, ttlMs(record.ttlSeconds), true);
        }
        return view(args.sessionId, record, await store.pttl(key), true);
      }
      case 'update': {
        const key = keyspace.sessionKey(args.sessionId);
        const record = parseRecord(await store.get(key));
        if (!record) throw notFound(args.sessionId);
        const data = args.merge && isPlainObject(record.data) && isPlainObject(args.data) ? { ...record.data, ...args.data } : args.data;
        const next: SessionRecord = {
          ...record,
          data,
          ttlSeconds: args.ttlSeconds ?? record.ttlSeconds,
          updatedAt: new Date().toISOString(),
        };
        const restart = record.sliding || args.ttlSeconds !== undefined;
        // XX: a session that expired between the read and the write stays gone.
        const stored = await store.set(key, serialize(next, maxValueBytes, 'session'), {
          xx: true,
          ...(restart ? { ttlMs: ttlMs(next.ttlSeconds) } : { keepTtl: true }),
        });
        if (!stored) throw notFound(args.sessionId);
        return view(args.sessionId, next, restart ? ttlMs(next.ttlSeconds) : await store.pttl(key), true);
      }
      case 'delete': {
        if ((await store.del([keyspace.sessionKey(args.sessionId)])) === 0) throw notFound(args.sessionId);
        return { sessionId: args.sessionId, deleted: true };
      }
      case 'list': {
        const page = await store.scan(keyspace.sessionPattern(), args.limit, args.cursor);
        const texts = page.keys.length ? await store.mget(page.keys) : [];
        const sessions = page.keys.flatMap((full, i) => {
          const record = parseRecord(texts[i]);
          return record ? [view(keyspace.fromSessionKey(full), record, -1, false)] : [];
        });
        return page.cursor ? { sessions, nextCursor: page.cursor, truncated: true } : { sessions };
      }
    }
  };

  return defineTool({
    name: 'session',
    title: 'Sessions',
    description:
      'Sessions with TTLs: action create (data, ttlSeconds default 3600 up to 30 days, sliding default true) | read | update (data, merge, ttlSeconds) | delete | list. ' +
      "Ids are 32 random URL-safe characters; a sliding session's TTL restarts on every read and update. Session data is JSON capped at CACHE_MAX_VALUE_BYTES " +
      '(default 512 KiB); list returns at most 1000 sessions per page without their data. Unknown or expired ids answer NOT_FOUND; 30 s call time limit.',
    // Listed as one object (an action enum, the other fields optional); validated per action by sessionInput.
    input: actionInput(sessionInput),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: handle,
  });
}
