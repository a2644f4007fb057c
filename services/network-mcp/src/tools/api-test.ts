import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';
import { headersField, METHODS, urlField } from './shared';

const MAX_ENDPOINTS = 20;
const MAX_REPEAT = 10;
const CONCURRENCY = 4;
const BUDGET_MS = 110_000;
const MAX_ERRORS_KEPT = 5;
/** api_test measures; it does not keep bodies. */
const PROBE_BODY_BYTES = 64 * 1024;

const statusCode = z.number().int().min(100).max(599);

const endpointSchema = z
  .object({
    url: urlField,
    method: z.enum(METHODS).default('GET').describe('HTTP method.'),
    expectedStatus: z
      .union([statusCode, z.array(statusCode).min(1).max(20)])
      .optional()
      .describe('Status (or list of statuses) that counts as a pass; default any 2xx.'),
    headers: headersField,
    body: z
      .string()
      .max(64 * 1024)
      .optional()
      .describe('Request body as text (not with GET or HEAD).'),
    timeoutMs: z.number().int().min(100).max(30_000).default(10_000).describe('Deadline of one request.'),
    followRedirects: z.boolean().default(true).describe('Follow redirects (at most 5 hops, each checked by the outbound policy).'),
  })
  .strict();

type Endpoint = z.output<typeof endpointSchema>;

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export function latencySummary(samples: number[]) {
  if (!samples.length) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const avg = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    min: sorted[0],
    avg: Math.round(avg * 10) / 10,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted[sorted.length - 1],
  };
}

export function apiTestTool({ client }: NetworkDeps) {
  return defineTool({
    name: 'api_test',
    title: 'API test',
    description:
      `Probe up to ${MAX_ENDPOINTS} endpoints, each up to ${MAX_REPEAT} times (repeat), and report per endpoint whether every ` +
      `answer had an expected status, the statuses seen, up to ${MAX_ERRORS_KEPT} errors, and latency min/avg/p50/p95/max in ms; ` +
      `plus a summary. Bodies are read (at most 64 KiB each) but not returned. Endpoints run ${CONCURRENCY} at a time, ` +
      `repeats one after another; one request times out after timeoutMs (default 10 s, at most 30 s) and the whole test after ` +
      `${BUDGET_MS / 1000} s (requests not started by then are counted as skipped). Outbound policy applies to every request.`,
    input: z
      .object({
        endpoints: z.array(endpointSchema).min(1).max(MAX_ENDPOINTS).describe(`Endpoints to probe (1-${MAX_ENDPOINTS}).`),
        repeat: z.number().int().min(1).max(MAX_REPEAT).default(1).describe(`Requests per endpoint (1-${MAX_REPEAT}).`),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    timeoutMs: BUDGET_MS + 10_000,
    handler: async (args, ctx) => {
      args.endpoints.forEach((e, i) => {
        if (e.body !== undefined && (e.method === 'GET' || e.method === 'HEAD')) {
          throw new AppError('VALIDATION_ERROR', `endpoints.${i}: a ${e.method} request cannot carry a body.`, {
            details: [{ path: `endpoints.${i}.body`, message: 'not allowed with GET or HEAD' }],
          });
        }
      });
      const deadline = Date.now() + BUDGET_MS;
      const started = performance.now();

      const probe = async (endpoint: Endpoint) => {
        const expected = endpoint.expectedStatus === undefined ? null : ([] as number[]).concat(endpoint.expectedStatus);
        const statuses: Record<string, number> = {};
        const latencies: number[] = [];
        const errors: { code: string; message: string }[] = [];
        let failures = 0;
        let skipped = 0;
        for (let i = 0; i < args.repeat; i++) {
          const remaining = deadline - Date.now();
          if (remaining < 100 || ctx.signal.aborted) {
            skipped = args.repeat - i;
            break;
          }
          const t0 = performance.now();
          try {
            const res = await client.request(endpoint.url, {
              method: endpoint.method,
              headers: endpoint.headers,
              body: endpoint.body,
              timeoutMs: Math.min(endpoint.timeoutMs, remaining),
              followRedirects: endpoint.followRedirects,
              maxResponseBytes: PROBE_BODY_BYTES,
              signal: ctx.signal,
            });
            latencies.push(Math.round(performance.now() - t0));
            statuses[String(res.status)] = (statuses[String(res.status)] ?? 0) + 1;
            const ok = expected ? expected.includes(res.status) : res.status >= 200 && res.status < 300;
            if (!ok) failures++;
          } catch (err) {
            const appErr = err instanceof AppError ? err : new AppError('UPSTREAM_ERROR', 'The request failed.');
            // Bad input (scheme, headers) is the caller's to fix: fail the whole call rather than report it N times.
            if (appErr.code === 'VALIDATION_ERROR') {
              throw new AppError('VALIDATION_ERROR', `${endpoint.url}: ${appErr.message}`, { details: appErr.details });
            }
            failures++;
            if (errors.length < MAX_ERRORS_KEPT) errors.push({ code: appErr.code, message: appErr.message });
          }
        }
        return {
          url: endpoint.url,
          method: endpoint.method,
          expectedStatus: expected ?? '2xx',
          passed: failures === 0 && skipped === 0,
          attempts: args.repeat - skipped,
          failures,
          ...(skipped ? { skipped } : {}),
          statuses,
          latencyMs: latencySummary(latencies),
          ...(errors.length ? { errors } : {}),
        };
      };

      const results: Awaited<ReturnType<typeof probe>>[] = new Array(args.endpoints.length);
      let next = 0;
      const worker = async () => {
        while (next < args.endpoints.length) {
          const i = next++;
          results[i] = await probe(args.endpoints[i]);
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, args.endpoints.length) }, worker));
      const allLatencies = results.flatMap((r) => (r.latencyMs ? [r.latencyMs.min, r.latencyMs.max] : []));
      return {
        summary: {
          endpoints: results.length,
          passed: results.filter((r) => r.passed).length,
          failed: results.filter((r) => !r.passed).length,
          requests: results.reduce((s, r) => s + r.attempts, 0),
          durationMs: Math.round(performance.now() - started),
          ...(allLatencies.length ? { fastestMs: Math.min(...allLatencies), slowestMs: Math.max(...allLatencies) } : {}),
        },
        endpoints: results,
      };
    },
  });
}
