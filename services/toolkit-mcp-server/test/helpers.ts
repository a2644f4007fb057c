import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const REPO = path.resolve(__dirname, '../../..');

/** The toolkit from its source over stdio, as an MCP client starts it, reading `workspace`; `env` adds or overrides variables. */
export async function startToolkit(workspace: string, env: Record<string, string> = {}, name = 'toolkit-test'): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'services/toolkit-mcp-server/src/server.ts'],
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', WORKSPACE_ROOTS: workspace, LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}
