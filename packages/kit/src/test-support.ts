/**
 * The few test helpers the kit's own tests need, kept here so that the kit does not depend on
 * @mcp-fleet/testing (which builds on the kit and re-exports these): a quiet logger, a temporary
 * directory, a server on port 0 and the base config of apps built in tests. Subpath
 * `@mcp-fleet/kit/test-support`; never imported by service code.
 */
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { processEnv } from './config';
import { createLogger, type Logger } from './logger';
import { listen, type RunningServer } from './server';

/** A logger that prints nothing unless TEST_LOG_LEVEL is set. */
export function testLogger(service = 'test'): Logger {
  const level = processEnv().TEST_LOG_LEVEL;
  return createLogger({ service, level: level ?? 'error', silent: !level });
}

/** A fresh temporary directory (real path), removed by the returned cleanup. */
export function tempDir(prefix = 'mcp-fleet-test-'): { dir: string; cleanup: () => void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Serve a handler on 127.0.0.1, port 0. Close it in afterAll. */
export function serve(handler: http.RequestListener): Promise<RunningServer> {
  return listen(handler, { host: '127.0.0.1', port: 0, shutdownTimeoutMs: 1000 });
}

/** Base config values for apps built in tests. */
export const testConfig = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'error' as const,
  BODY_LIMIT: '1mb',
  TOOL_TIMEOUT_MS: 10_000,
  SHUTDOWN_TIMEOUT_MS: 1000,
};

/** testConfig as environment strings, plus `extra`: for services whose readConfig(env) parses process-style input. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...Object.fromEntries(Object.entries(testConfig).map(([k, v]) => [k, String(v)])), ...extra };
}

/**
 * The request and tool-call counts of a registry: every sample of its HTTP, tool and gateway-call
 * counters and the sample count of their histograms, as `name{labels}` -> value.
 */
export async function requestCounts(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!/^mcp_fleet_(http_request|tool_call|gateway_call)/.test(metric.name)) continue;
    for (const v of metric.values as { labels: Record<string, unknown>; value: number; metricName?: string }[]) {
      const name = v.metricName ?? metric.name;
      if (name !== metric.name && !name.endsWith('_count')) continue; // a histogram: its count only
      const { service: _service, ...labels } = v.labels;
      out[`${name}${JSON.stringify(labels)}`] = v.value;
    }
  }
  return out;
}

/** What changed between two requestCounts readings (only the samples that grew). */
export function countsAdded(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .filter(([k, v]) => v !== (before[k] ?? 0))
      .map(([k, v]) => [k, v - (before[k] ?? 0)]),
  );
}

/**
 * The counts with route="unmatched" read as `route`: where Express's body parser or router fails
 * before a route matches, it counts the request as unmatched; a hot path knows its route from the URL.
 */
export function unmatchedAs(counts: Record<string, number>, route: string): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k.replace('"route":"unmatched"', `"route":"${route}"`), v]));
}

/**
 * How many times an AbortController's signal was read (in Node 20 the first read makes the
 * AbortSignal, at a cost of microseconds) while `run` ran; only the reads whose stack `counted`
 * accepts, when given (a gateway and a service in one test process). The getter is restored after.
 */
export async function abortSignalReads(run: () => Promise<void>, counted: (stack: string) => boolean = () => true): Promise<number> {
  const signal = Object.getOwnPropertyDescriptor(AbortController.prototype, 'signal')!;
  let reads = 0;
  Object.defineProperty(AbortController.prototype, 'signal', {
    ...signal,
    get(this: AbortController) {
      if (counted(new Error().stack ?? '')) reads++;
      return signal.get!.call(this);
    },
  });
  try {
    await run();
  } finally {
    Object.defineProperty(AbortController.prototype, 'signal', signal);
  }
  return reads;
}
