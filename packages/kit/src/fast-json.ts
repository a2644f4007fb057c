import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * JSON in and out without Express's body parser and res.json, for the hot routes (a tool call):
 * the same answers for the same input (the errors carry body-parser's `type`, so toAppError maps
 * them to the same codes), minus the work those do for cases the hot routes never see (charsets
 * other than UTF-8, compressed bodies, ETags of POST answers, content negotiation).
 */

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** "1mb", "512kb", "524288" (the BODY_LIMIT format) in bytes. */
export function byteLimit(limit: string): number {
  const m = /^(\d+)(b|kb|mb)?$/i.exec(limit.trim());
  if (!m) throw new Error(`not a size: ${limit} (use e.g. 1mb or 524288)`);
  return Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()];
}

/** True when the request body is plain JSON the hot path may read itself (else leave it to Express). */
export function isPlainJsonRequest(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  // application/json, optionally with charset=utf-8 and nothing else
  return /^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i.test(type);
}

function bodyError(type: string, message: string, status: number): Error {
  return Object.assign(new Error(message), { type, status, expose: true });
}

/** As body-parser does: the (start of the) text rides on the error, for callers that look at it. */
function parseError(text: string, message: string): Error {
  return Object.assign(bodyError('entity.parse.failed', message, 400), { body: text.slice(0, 4096) });
}

/**
 * Reads a JSON body (strict: an object or an array at the top; empty is `{}`, as body-parser
 * answers) up to `limit` bytes. Rejects with body-parser's error types.
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      req.resume();
      return reject(bodyError('entity.too.large', 'request entity too large', 413));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        return reject(bodyError('entity.too.large', 'request entity too large', 413));
      }
      chunks.push(chunk);
    });
    req.once('error', (err) => {
      if (!failed) reject(Object.assign(err, { type: 'request.aborted', status: 400 }));
      failed = true;
    });
    req.once('end', () => {
      if (failed) return;
      const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
      if (text.length === 0) return resolve({});
      let i = 0;
      while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
      const first = text[i];
      if (first !== '{' && first !== '[') return reject(parseError(text, 'not a JSON object or array'));
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(parseError(text, (err as Error).message));
      }
    });
  });
}

/** Writes a JSON answer as res.json would (same Content-Type), without an ETag. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Writes JSON already serialized, as sendJson does. */
export function sendJsonText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
