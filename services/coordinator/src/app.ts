import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { gatewayUrlOf, SERVICE_ID, type Config } from './config';
import { createGatewayClient } from './gateway';
import { createLimiter } from './rate-limit';
import { mountSurface } from './surface';
import { createTools, FORWARDED } from './tools';

export interface AppDeps {
  config: Config;
  logger: Logger;
  /** Process metrics (on unless a test that builds several apps turns them off). */
  defaultMetrics?: boolean;
}

const GATEWAY_HEALTH_TIMEOUT_MS = 2000;

/** Builds the app; never listens (server.ts does). */
export function createApp({ config, logger, defaultMetrics }: AppDeps): ServiceApp {
  const startedAt = Date.now();
  const gateway = createGatewayClient({
    url: config.gatewayUrl ?? gatewayUrlOf(config),
    maxResponseBytes: config.COORDINATOR_MAX_RESPONSE_BYTES,
  });
  const limiter = createLimiter(
    {
      limit: config.COORDINATOR_RATE_LIMIT,
      windowMs: config.COORDINATOR_RATE_WINDOW_MS,
      redisUrl: config.REDIS_URL,
      prefix: config.COORDINATOR_RATE_PREFIX,
      redisTimeoutMs: config.COORDINATOR_RATE_REDIS_TIMEOUT_MS,
    },
    logger,
  );
  if (limiter)
    logger.info('rate limit is on', {
      perWindow: config.COORDINATOR_RATE_LIMIT,
      windowMs: config.COORDINATOR_RATE_WINDOW_MS,
      store: limiter.store,
    });

  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    defaultMetrics,
    tools: createTools({ gateway, callTimeoutMs: config.COORDINATOR_CALL_TIMEOUT_MS }),
    healthChecks: [
      {
        // the coordinator answers without the gateway (every call then says UPSTREAM_UNAVAILABLE): degraded, not down
        name: 'gateway',
        required: false,
        timeoutMs: GATEWAY_HEALTH_TIMEOUT_MS,
        check: async () => {
          const { status } = await gateway.get('/health', { signal: AbortSignal.timeout(GATEWAY_HEALTH_TIMEOUT_MS) });
          if (status !== 200) throw new Error(`the gateway at ${gateway.url} answered /health with ${status}`);
          return { url: gateway.url };
        },
      },
      ...(limiter?.check ? [{ name: 'redis', required: false, check: limiter.check }] : []),
    ],
    extend: (app, kit) => {
      if (config.TRUST_PROXY !== undefined) app.set('trust proxy', config.TRUST_PROXY);
      // Mounted first, so every route behind it (the kit's /tools/* too) is counted; the probes are skipped inside.
      if (limiter) app.use(limiter.middleware(kit));
      mountSurface(app, kit, {
        gateway,
        tools: FORWARDED,
        bodyLimit: config.BODY_LIMIT,
        rateLimit: {
          limit: config.COORDINATOR_RATE_LIMIT,
          windowMs: config.COORDINATOR_RATE_WINDOW_MS,
          store: limiter?.store ?? 'off',
        },
        startedAt,
      });
    },
    onClose: () => limiter?.close(),
  });
}
