import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';
import { describeBody } from '../response-body';
import { headersField, METHODS, urlField } from './shared';

const MAX_TIMEOUT_MS = 60_000;

export function httpRequestTool({ config, client }: NetworkDeps) {
  const maxBytes = config.HTTP_MAX_RESPONSE_BYTES;
  return defineTool({
    name: 'http_request',
    title: 'HTTP request',
    description:
      `Send one HTTP(S) request and return status, headers, body, timing, the final URL and the redirect chain. ` +
      `Redirects are followed hop by hop (default 5, at most 20) and every hop is checked: private, loopback, link-local and ` +
      `cloud-metadata addresses are refused unless allowlisted. Timeout default 10 s, at most ${MAX_TIMEOUT_MS / 1000} s for the whole exchange. ` +
      `The body is cut at maxResponseBytes (default 1 MiB, at most ${maxBytes} bytes) with truncated: true; ` +
      `text bodies come back as UTF-8, others as base64.`,
    input: z
      .object({
        url: urlField,
        method: z.enum(METHODS).default('GET').describe('HTTP method.'),
        headers: headersField,
        body: z.string().optional().describe('Request body as text (not with GET or HEAD; not with json).'),
        json: z.json().optional().describe('Request body as JSON; sets Content-Type: application/json unless given.'),
        timeoutMs: z
          .number()
          .int()
          .min(100)
          .max(MAX_TIMEOUT_MS)
          .default(10_000)
          .describe('Deadline for the whole exchange, redirects included.'),
        followRedirects: z.boolean().default(true).describe('Follow 3xx responses; false returns the 3xx itself.'),
        maxRedirects: z.number().int().min(0).max(20).default(5).describe('More redirects than this fails with UPSTREAM_ERROR.'),
        maxResponseBytes: z
          .number()
          .int()
          .min(1)
          .max(maxBytes)
          .default(Math.min(1024 * 1024, maxBytes))
          .describe(`Bytes of response body kept (at most ${maxBytes}); the rest is cut and truncated set.`),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    timeoutMs: MAX_TIMEOUT_MS + 5000,
    handler: async (args, ctx) => {
      if (args.body !== undefined && args.json !== undefined) {
        throw new AppError('VALIDATION_ERROR', 'Send either body or json, not both.', {
          details: [{ path: 'json', message: 'conflicts with body' }],
        });
      }
      const hasBody = args.body !== undefined || args.json !== undefined;
      if (hasBody && (args.method === 'GET' || args.method === 'HEAD')) {
        throw new AppError('VALIDATION_ERROR', `A ${args.method} request cannot carry a body; use POST, PUT or PATCH.`, {
          details: [{ path: 'body', message: 'not allowed with GET or HEAD' }],
        });
      }
      const headers = { ...(args.headers ?? {}) };
      let body = args.body;
      if (args.json !== undefined) {
        body = JSON.stringify(args.json);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
      const res = await client.request(args.url, {
        method: args.method,
        headers,
        body,
        timeoutMs: args.timeoutMs,
        followRedirects: args.followRedirects,
        maxRedirects: args.maxRedirects,
        maxResponseBytes: args.maxResponseBytes,
        signal: ctx.signal,
      });
      const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : undefined;
      const described = describeBody(res.body, contentType);
      let json: unknown;
      if (!res.truncated && described.bodyEncoding === 'utf8' && contentType && /[/+]json\b/i.test(contentType)) {
        try {
          json = JSON.parse(described.body);
        } catch {
          // not valid JSON despite the header: the text body is still there
        }
      }
      return {
        url: res.url,
        status: res.status,
        ok: res.status >= 200 && res.status < 300,
        headers: res.headers,
        ...described,
        ...(json !== undefined ? { json } : {}),
        bodyBytes: res.bodyBytes,
        truncated: res.truncated,
        redirects: res.redirects,
        timing: res.timing,
      };
    },
  });
}
