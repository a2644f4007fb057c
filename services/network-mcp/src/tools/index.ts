import type { ToolDefinition } from '@mcp-fleet/kit';
import type { NetworkDeps } from '../deps';
import { apiTestTool } from './api-test';
import { dnsLookupTool } from './dns-lookup';
import { httpRequestTool } from './http-request';
import { webhookCreateTool } from './webhook-create';
import { webhookDeleteTool } from './webhook-delete';
import { webhookListTool } from './webhook-list';
import { webhookLogsTool } from './webhook-logs';

export function createTools(deps: NetworkDeps): ToolDefinition[] {
  return [
    httpRequestTool(deps),
    webhookCreateTool(deps),
    webhookListTool(deps),
    webhookLogsTool(deps),
    webhookDeleteTool(deps),
    dnsLookupTool(deps),
    apiTestTool(deps),
  ];
}
