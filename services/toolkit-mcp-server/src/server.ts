import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import winston from 'winston';
import { createApp } from './app';
import { readConfig, SERVICE_ID } from './config';

// stdout carries the MCP protocol: every log line goes to stderr.
async function main(): Promise<void> {
  let config;
  try {
    config = readConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const logger = winston.createLogger({
    level: config.LOG_LEVEL,
    defaultMeta: { service: SERVICE_ID },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: process.stderr })],
  });
  const server = await createApp({ config, logger });
  await server.connect(new StdioServerTransport());
  logger.info('toolkit-mcp-server ready on stdio', { llm: Boolean(config.LLM_BASE_URL) });
  const stop = () => void server.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
}

void main();
