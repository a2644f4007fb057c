/**
 * Marketplace skills as prompts through the gateway: a real marketplace-mcp (JWT on, the gateway sends
 * MARKETPLACE_JWT_TOKEN) and a second kit service offering prompts, listed and got by the official
 * SDK clients of both protocol eras (v1 with a 2025-11-25 session, v2 over stateless 2026-07-28).
 */
import path from 'node:path';
import { serve } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { promptService, startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { rawArchive, skillMd } from '../../services/marketplace-mcp/test/shared';
import { marketplaceDownstream, securedMarketplace } from '../support/secured-marketplace';

const JWT_SECRET = 'gateway-prompts-secret-0123456789abcdef';
const ADMIN = 'security-admin-credential-02';
const { tmp, security, market } = securedMarketplace('market-prompts-', JWT_SECRET, ADMIN);

// A second kit service with prompts: one name collides with a skill, one does not.
const notes = promptService('notes-mcp', [
  { name: 'sql-review', description: 'Notes on SQL.' },
  { name: 'note-summary', description: 'Summarise notes.', arguments: [{ name: 'topic', required: true }] },
]);

let marketServer: Awaited<ReturnType<typeof serve>>;
let notesServer: Awaited<ReturnType<typeof serve>>;
let g: RunningGateway;

beforeAll(async () => {
  await market.ready;
  marketServer = await serve(market.app);
  notesServer = await serve(notes.app);
  const { specs } = await marketplaceDownstream(security, ADMIN, marketServer.url);
  g = await startGateway([...specs, { id: 'notes-mcp', url: notesServer.url }], path.join(tmp.dir, 'gw'));
});
afterAll(async () => {
  await g.stop();
  await marketServer.stop();
  await notesServer.stop();
  await market.close();
  tmp.cleanup();
});

const EXPECTED = ['commit-message', 'fleet-health-check', 'marketplace-mcp__sql-review', 'note-summary', 'notes-mcp__sql-review'];

describe('marketplace skills as prompts through the gateway', () => {
  it('v1 SDK client (2025-11-25 session): skills beside another service’s prompts, collisions prefixed; get renders SKILL.md', async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(EXPECTED);
    expect(prompts.find((p) => p.name === 'marketplace-mcp__sql-review')).toMatchObject({
      description: expect.stringMatching(/^Review SQL migrations/),
      arguments: [{ name: 'input', required: false }],
    });
    const got = await client.getPrompt({ name: 'marketplace-mcp__sql-review', arguments: { input: 'migrations/7.sql' } });
    expect(got.messages[0]).toMatchObject({ role: 'user', content: { type: 'text' } });
    const text = (got.messages[0].content as { text: string }).text;
    expect(text.startsWith('# SQL review')).toBe(true);
    expect(text.endsWith('\n\nmigrations/7.sql')).toBe(true);
    expect((await client.getPrompt({ name: 'note-summary', arguments: { topic: 'x' } })).messages[0].content).toEqual({
      type: 'text',
      text: 'note-summary about x',
    });
    // The marketplace's argument checks come back as -32602.
    await expect(client.getPrompt({ name: 'commit-message', arguments: { nope: 'x' } })).rejects.toThrow(/-32602.*nope is not one of/);
    await expect(client.getPrompt({ name: 'note-summary', arguments: {} })).rejects.toThrow(/-32602.*topic is required/);
    await client.close();
  });

  it('v2 SDK client (2026-07-28, stateless): the same prompts, and a skill prompt got', async () => {
    const client = new V2Client({ name: 'v2', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as ConstructorParameters<typeof V2Client>[1]);
    await client.connect(new V2Transport(new URL(`${g.url}/mcp`)));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(EXPECTED);
    const got = await client.getPrompt({ name: 'commit-message' });
    expect(got.description).toMatch(/^commit-message@1\.1\.0:/);
    expect((got.messages[0].content as { text: string }).text).toMatch(/\S/);
    await client.close();
  });

  it('a skill published to the marketplace is a prompt after the gateway’s next refresh', async () => {
    await market.catalog.publish(
      'deploy-notes',
      '1.0.0',
      await rawArchive([{ name: 'deploy-notes/SKILL.md', data: skillMd('deploy-notes', '1.0.0') }]),
    );
    await g.gw.refresh();
    const client = new Client({ name: 'v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('deploy-notes');
    const got = await client.getPrompt({ name: 'deploy-notes' });
    expect((got.messages[0].content as { text: string }).text).toBe('# deploy-notes\n\nBody of deploy-notes 1.0.0.');
    await client.close();
  });
});
