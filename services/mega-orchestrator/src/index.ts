export { createApp, type Gateway, type GatewayDeps } from './http/app';
export { configSchema, defaultDownstreams, readConfig, SERVICE_ID, type Config } from './core/config';
export type { DownstreamSpec } from './core/types';
