export { createApp, type Gateway, type GatewayDeps } from './app';
export { configSchema, defaultDownstreams, readConfig, SERVICE_ID, type Config } from './config';
export type { DownstreamSpec } from './types';
