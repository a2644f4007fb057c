/**
 * Behind a load balancer, a 2026-07-28 request that belongs to a call held in another gateway
 * instance's memory (a retry with the requestState of an input_required result, a tasks/update of a
 * task whose open requests live there) is forwarded to that instance, and its answer (JSON, or an
 * event stream) passed back unchanged. The instance's address comes from the signed requestState or
 * the task store, never from the caller as such; a forwarded request is not forwarded again.
 */
import { createHmac } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { sameSecret, type HttpResponse, type Logger } from '@mcp-fleet/kit';

/** Marks a request one instance forwarded to another: the receiver answers it itself. */
export const FORWARDED_HEADER = 'mcp-fleet-forwarded-by';
/**
 * That the forwarding instance holds the shared MCP_STATE_SECRET: `<ms>.<HMAC-SHA256 of "<ms>.<body>">`.
 * The receiver then does not count the request against rate limits: the instance that forwarded it
 * counted it already (a client's one retry is one request).
 */
export const FORWARD_PROOF_HEADER = 'mcp-fleet-forward-proof';
const PROOF_MAX_AGE_MS = 60_000;

const proofOf = (secret: string, at: number, body: string) => createHmac('sha256', secret).update(`${at}.${body}`).digest('base64url');

/** The FORWARD_PROOF_HEADER value for a body sent as this text. */
export const forwardProof = (secret: string, bodyText: string, at = Date.now()): string => `${at}.${proofOf(secret, at, bodyText)}`;

/** Thrown where a request turns out to belong to another instance (core/held-elsewhere.ts). */
export { HeldElsewhere } from '../../core/held-elsewhere';

const CONNECT_TIMEOUT_MS = 5000;

/** Headers that belong to one connection (RFC 9110 §7.6.1), and the ones recomputed for the new body. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'expect',
]);

const keep = (headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders => {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
};

export function wasForwarded(req: IncomingMessage): boolean {
  return req.headers[FORWARDED_HEADER] !== undefined;
}

/** A request forwarded by an instance with this secret, its proof fresh and made for this body (as parsed). */
export function isProvenForward(req: IncomingMessage, body: unknown, secret: string | undefined, now = Date.now()): boolean {
  const header = req.headers[FORWARD_PROOF_HEADER];
  if (!secret || !wasForwarded(req) || typeof header !== 'string') return false;
  const dot = header.indexOf('.');
  const at = Number(header.slice(0, dot));
  if (dot <= 0 || !Number.isSafeInteger(at) || Math.abs(now - at) > PROOF_MAX_AGE_MS) return false;
  // The sender signed JSON.stringify of the body it parsed; parsing that and stringifying again gives the same text.
  return sameSecret(header.slice(dot + 1), proofOf(secret, at, JSON.stringify(body)));
}

/**
 * POSTs the request (its headers, the JSON body it carried) to the instance's MCP endpoint and pipes
 * the answer back. Resolves with false, having sent nothing, when the instance cannot be reached (the
 * caller then answers the refusal); a client that hangs up aborts the forwarded request, and so the
 * call there.
 */
export function forwardToPeer(
  req: IncomingMessage,
  res: HttpResponse,
  target: string,
  body: unknown,
  self: string | undefined,
  logger: Logger,
  secret?: string,
): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    logger.warn('a gateway instance address is not a URL; the request is refused instead of forwarded', { target });
    return Promise.resolve(false);
  }
  const text = JSON.stringify(body);
  const payload = Buffer.from(text);
  const headers = keep(req.headers);
  headers['content-length'] = payload.length;
  headers[FORWARDED_HEADER] = self ?? 'an instance without MCP_INSTANCE_URL';
  // (a caller's own proof header is never passed on)
  delete headers[FORWARD_PROOF_HEADER];
  if (secret) headers[FORWARD_PROOF_HEADER] = forwardProof(secret, text);
  const via = req.headers['x-forwarded-for'];
  const from = req.socket.remoteAddress;
  if (from) headers['x-forwarded-for'] = via ? `${String(via)}, ${from}` : from;
  return new Promise((resolve) => {
    const out = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, keep(answer.headers));
      // An event stream goes out as it arrives.
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      answer.on('close', () => {
        res.off('close', hangUp);
        resolve(true);
      });
    });
    const hangUp = () => out.destroy();
    res.on('close', hangUp);
    // An address that swallows the connection is given up after a while; the call itself may run long.
    out.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => out.destroy(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    out.on('error', (err) => {
      res.off('close', hangUp);
      if (res.headersSent) {
        res.destroy();
        return resolve(true);
      }
      logger.warn('could not forward a request to the gateway instance holding its call', { target, err });
      resolve(false);
    });
    out.end(payload);
  });
}
