/**
 * The official SDK clients as hosts of the MCP Skills extension: v2 over stateless 2026-07-28 with
 * its SkillsClient (which verifies every file against the entry), and a raw request for the v1
 * client (2025-11-25 session), which has no skills methods of its own.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

/** A v2 client pinned to 2026-07-28 on `<url>/mcp` (headers on every request), and its SkillsClient. */
export async function connectSkills(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ client: V2Client; skills: SkillsClient }> {
  const client = new V2Client({ name: 'skills-host', version: '1.0.0' }, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  } as ConstructorParameters<typeof V2Client>[1]);
  await client.connect(new V2Transport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return { client, skills: new SkillsClient(client) };
}

/** One request of any method through a v1 client (skills/list, skills/get, resources/directory/read). */
export const request = (client: Client, method: string, params: Record<string, unknown> = {}) =>
  client.request({ method, params } as never, ResultSchema) as Promise<Record<string, unknown>>;
