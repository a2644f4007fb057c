import { createLogger, createTracer, runService, setProcessTracer, tuneHeapForServing } from '@mcp-fleet/kit';
import { getService } from '@mcp-fleet/inventory';
import { createApp } from './http/app';
import { readConfig, SERVICE_ID } from './core/config';

tuneHeapForServing();
let config: ReturnType<typeof readConfig>;
try {
  config = readConfig();
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
const logger = createLogger({ service: SERVICE_ID, level: config.LOG_LEVEL, file: config.LOG_FILE, lokiUrl: config.LOKI_URL });
async function main() {
  const tracer = await createTracer({
    service: SERVICE_ID,
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    tracesUrl: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  });
  setProcessTracer(tracer);
  const gateway = createApp({ config, logger, defaultMetrics: true });
  // End MCP sessions (and their SSE streams) first so the server can stop without waiting on them.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void gateway.mcp.close());
  await runService(gateway.app, {
    service: SERVICE_ID,
    logger,
    host: config.HOST,
    port: config.PORT ?? getService(SERVICE_ID)!.port,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    allowedHosts: config.ALLOWED_HOSTS,
    onClose: async () => {
      await gateway.close();
      await tracer.shutdown();
    },
  });
}

void main();
