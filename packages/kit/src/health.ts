export interface HealthCheck {
  name: string;
  /** A failing required check makes /health answer 503; an optional one only "degraded". */
  required?: boolean;
  /** Resolve (optionally with detail) when healthy; throw when not. */
  check: () => Promise<unknown> | unknown;
  timeoutMs?: number;
}

export interface CheckResult {
  status: 'ok' | 'error';
  required: boolean;
  latencyMs: number;
  detail?: unknown;
  error?: string;
}

export interface HealthReport {
  status: 'healthy' | 'degraded' | 'unhealthy';
  service: string;
  version: string;
  uptimeSeconds: number;
  timestamp: string;
  tools: number;
  checks: Record<string, CheckResult>;
}

async function runCheck(c: HealthCheck): Promise<CheckResult> {
  const started = performance.now();
  const required = c.required ?? true;
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      Promise.resolve().then(() => c.check()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`check timed out after ${c.timeoutMs ?? 2000} ms`)), c.timeoutMs ?? 2000);
      }),
    ]);
    return { status: 'ok', required, latencyMs: Math.round(performance.now() - started), ...(detail === undefined ? {} : { detail }) };
  } catch (err) {
    return { status: 'error', required, latencyMs: Math.round(performance.now() - started), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export async function runHealthChecks(
  service: string,
  version: string,
  startedAt: number,
  tools: number,
  checks: HealthCheck[],
): Promise<HealthReport> {
  const results = await Promise.all(checks.map(runCheck));
  const byName: Record<string, CheckResult> = {};
  checks.forEach((c, i) => (byName[c.name] = results[i]));
  const failedRequired = results.some((r) => r.status === 'error' && r.required);
  const failedOptional = results.some((r) => r.status === 'error' && !r.required);
  return {
    status: failedRequired ? 'unhealthy' : failedOptional ? 'degraded' : 'healthy',
    service,
    version,
    uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
    timestamp: new Date().toISOString(),
    tools,
    checks: byName,
  };
}
