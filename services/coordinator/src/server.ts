import { bootService } from '@mcp-fleet/kit';
import { getService } from '@mcp-fleet/inventory';
import { createApp } from './app';
import { readConfig, SERVICE_ID } from './config';

void bootService({ service: SERVICE_ID, defaultPort: getService(SERVICE_ID)!.port, readConfig, createApp });
