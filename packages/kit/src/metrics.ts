import client from 'prom-client';

export interface ServiceMetrics {
  registry: client.Registry;
  httpRequests: client.Counter<'method' | 'route' | 'status'>;
  httpDuration: client.Histogram<'method' | 'route'>;
  toolCalls: client.Counter<'tool' | 'outcome'>;
  toolDuration: client.Histogram<'tool'>;
}

/** Buckets (seconds) of every HTTP and tool-duration histogram in the fleet. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One registry per app, so several apps in one process (tests) never share counters. */
export function createMetrics(service: string, withDefaults = true): ServiceMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  if (withDefaults) client.collectDefaultMetrics({ register: registry, prefix: 'mcp_fleet_' });
  const httpRequests = new client.Counter({
    name: 'mcp_fleet_http_requests_total',
    help: 'HTTP requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new client.Histogram({
    name: 'mcp_fleet_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const toolCalls = new client.Counter({
    name: 'mcp_fleet_tool_calls_total',
    help: 'Tool calls by tool and outcome (ok or an error code).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const toolDuration = new client.Histogram({
    name: 'mcp_fleet_tool_call_duration_seconds',
    help: 'Tool call latency by tool.',
    labelNames: ['tool'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return { registry, httpRequests, httpDuration, toolCalls, toolDuration };
}

/** For services that add metrics of their own, without depending on prom-client directly. */
export { Counter, Gauge, Histogram } from 'prom-client';
