import { Counter, createMetrics, DURATION_BUCKETS, Gauge, Histogram, type ServiceMetrics } from '@mcp-fleet/kit';
import type { RoutingMode, Transport } from './types';

interface Tally {
  calls: number;
  errors: number;
  totalMs: number;
}

const MAX_TRACKED_SESSIONS = 10_000;

export interface CallStat {
  transport: Transport;
  tool: string;
  service?: string;
  ok: boolean;
  code?: string;
  durationMs: number;
  mode: RoutingMode;
  sessionId?: string;
}

/** The gateway's counters: /stats reads them, /metrics exposes them to Prometheus. */
export class GatewayStats {
  readonly startedAt = Date.now();
  readonly metrics: ServiceMetrics;
  private readonly requests = new Map<string, { ok: number; error: number }>();
  private readonly errorsByCode = new Map<string, number>();
  private readonly perTool = new Map<string, Tally>();
  private readonly perService = new Map<string, Tally>();
  private readonly lastModeBySession = new Map<string, RoutingMode>();
  private lastGlobalMode?: RoutingMode;
  modeSwitches = 0;
  failovers = 0;
  retries = 0;
  private readonly calls: Counter<'tool' | 'downstream' | 'outcome'>;
  private readonly callSeconds: Histogram<'downstream'>;

  constructor(service: string, defaultMetrics: boolean) {
    this.metrics = createMetrics(service, defaultMetrics);
    this.calls = new Counter({
      name: 'mcp_fleet_gateway_calls_total',
      help: 'Tool calls routed by the gateway, by tool, downstream service and outcome (ok or an error code).',
      labelNames: ['tool', 'downstream', 'outcome'] as const,
      registers: [this.metrics.registry],
    });
    this.callSeconds = new Histogram({
      name: 'mcp_fleet_gateway_call_duration_seconds',
      help: 'Latency of tool calls routed by the gateway, by downstream service.',
      labelNames: ['downstream'] as const,
      buckets: DURATION_BUCKETS,
      registers: [this.metrics.registry],
    });
  }

  /** Gauges read at scrape time: whether each downstream is up, its breaker state and its tool count. */
  watchDownstreams(read: () => { id: string; up: boolean; breakerOpen: boolean; tools: number }[]): void {
    const gauge = (name: string, help: string, value: (d: ReturnType<typeof read>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['downstream'] as const,
        registers: [this.metrics.registry],
        collect() {
          this.reset();
          for (const d of read()) this.set({ downstream: d.id }, value(d));
        },
      });
    gauge('mcp_fleet_downstream_up', '1 when the downstream answered its last health poll as healthy, else 0.', (d) => (d.up ? 1 : 0));
    gauge('mcp_fleet_downstream_breaker_open', '1 while the downstream circuit breaker is open or half-open.', (d) =>
      d.breakerOpen ? 1 : 0,
    );
    gauge('mcp_fleet_downstream_tools', 'Tools the downstream offered at its last good poll.', (d) => d.tools);
  }

  /** Gauges of the call-history write queue (the FleetSessionQueueFull and FleetHistoryDropping alerts read them). */
  watchHistoryQueue(read: () => { length: number; capacity: number; dropped: number }): void {
    const gauge = (name: string, help: string, value: (q: ReturnType<typeof read>) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.metrics.registry],
        collect() {
          this.set(value(read()));
        },
      });
    gauge('mcp_fleet_gateway_history_queue_length', 'Call records waiting to be written to the history store.', (q) => q.length);
    gauge('mcp_fleet_gateway_history_queue_capacity', 'Records the history queue holds before dropping the oldest.', (q) => q.capacity);
    gauge(
      'mcp_fleet_gateway_history_dropped',
      'Call records dropped since start: the history queue was full, or the store refused a batch (logged as an error).',
      (q) => q.dropped,
    );
  }

  /** Counts a rate-limit count that Redis did not answer (the request went through uncounted). */
  watchRateStore(): () => void {
    const errors = new Counter({
      name: 'mcp_fleet_gateway_rate_limit_store_errors_total',
      help: 'Requests let through uncounted because the rate-limit store (Redis) failed or did not answer in time.',
      registers: [this.metrics.registry],
    });
    return () => errors.inc();
  }

  request(transport: Transport, ok: boolean): void {
    const key = transport;
    let t = this.requests.get(key);
    if (!t) this.requests.set(key, (t = { ok: 0, error: 0 }));
    if (ok) t.ok += 1;
    else t.error += 1;
  }

  error(code: string): void {
    this.errorsByCode.set(code, (this.errorsByCode.get(code) ?? 0) + 1);
  }

  call(stat: CallStat): void {
    const outcome = stat.ok ? 'ok' : (stat.code ?? 'error');
    if (!stat.ok) this.error(outcome);
    this.trackMode(stat.mode, stat.sessionId);
    // Per-tool tallies only for names that resolved to a service, so random names cannot grow the maps.
    if (stat.service) {
      tally(this.perTool, stat.tool, stat.ok, stat.durationMs);
      tally(this.perService, stat.service, stat.ok, stat.durationMs);
      this.calls.inc({ tool: stat.tool, downstream: stat.service, outcome });
      this.callSeconds.observe({ downstream: stat.service }, stat.durationMs / 1000);
      this.metrics.toolCalls.inc({ tool: stat.tool, outcome });
      this.metrics.toolDuration.observe({ tool: stat.tool }, stat.durationMs / 1000);
    } else {
      this.calls.inc({ tool: '(unresolved)', downstream: '(none)', outcome });
    }
  }

  private trackMode(mode: RoutingMode, sessionId: string | undefined): void {
    if (sessionId === undefined) {
      if (this.lastGlobalMode !== undefined && this.lastGlobalMode !== mode) this.modeSwitches += 1;
      this.lastGlobalMode = mode;
      return;
    }
    const last = this.lastModeBySession.get(sessionId);
    if (last !== undefined && last !== mode) this.modeSwitches += 1;
    if (last === undefined && this.lastModeBySession.size >= MAX_TRACKED_SESSIONS) {
      const oldest = this.lastModeBySession.keys().next().value;
      if (oldest !== undefined) this.lastModeBySession.delete(oldest);
    }
    this.lastModeBySession.set(sessionId, mode);
  }

  snapshot(): Record<string, unknown> {
    const requests: Record<string, { ok: number; error: number; total: number }> = {};
    let total = 0;
    for (const [k, v] of this.requests) {
      requests[k] = { ...v, total: v.ok + v.error };
      total += v.ok + v.error;
    }
    return {
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      startedAt: new Date(this.startedAt).toISOString(),
      requestsProcessed: total,
      requests,
      errorsByCode: Object.fromEntries(this.errorsByCode),
      tools: tallies(this.perTool),
      services: tallies(this.perService),
      modeSwitches: this.modeSwitches,
      failovers: this.failovers,
      retries: this.retries,
    };
  }
}

function tally(map: Map<string, Tally>, key: string, ok: boolean, ms: number): void {
  let t = map.get(key);
  if (!t) map.set(key, (t = { calls: 0, errors: 0, totalMs: 0 }));
  t.calls += 1;
  if (!ok) t.errors += 1;
  t.totalMs += ms;
}

function tallies(map: Map<string, Tally>): Record<string, { calls: number; errors: number; avgMs: number }> {
  const out: Record<string, { calls: number; errors: number; avgMs: number }> = {};
  for (const [k, t] of map) out[k] = { calls: t.calls, errors: t.errors, avgMs: Math.round((t.totalMs / t.calls) * 100) / 100 };
  return out;
}
