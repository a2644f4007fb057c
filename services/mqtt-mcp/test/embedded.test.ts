import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serve } from '@mcp-fleet/testing';
import { behaviourSuite, peer, startService, until, type Harness } from './shared';

describe('mqtt-mcp on the embedded aedes broker', () => {
  behaviourSuite(() => ({}));
});

describe('mqtt-mcp validation, truncation, /mcp and status (embedded broker)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startService({ MQTT_MAX_PAYLOAD_BYTES: 16, MQTT_MAX_TOPIC_BYTES: 32, MQTT_BUFFER_TOTAL: 3 });
  });
  afterAll(() => h.cleanup());

  it.each([
    [{ topic: 'a/+/b', payload: 'x' }, 'wildcard'],
    [{ topic: 'a/#', payload: 'x' }, 'wildcard'],
    [{ topic: 'a//b', payload: 'x' }, 'empty level'],
    [{ topic: 'a/', payload: 'x' }, 'empty level'],
    [{ topic: '$SYS/broker/x', payload: 'x' }, '$'],
    [{ topic: 'a/\ud800', payload: 'x' }, 'UTF-8'],
    [{ topic: 'a', payload: 'bad \udc00' }, 'UTF-8'],
    [{ topic: 'x'.repeat(33), payload: 'x' }, 'MQTT_MAX_TOPIC_BYTES'],
    [{ topic: 'a', payload: 'x'.repeat(17) }, 'MQTT_MAX_PAYLOAD_BYTES'],
    [{ topic: 'a', payload: 'x', qos: 3 }, ''],
    [{ topic: 'a', payload: 'x', qos: -1 }, ''],
  ])('refuses publish %j with VALIDATION_ERROR', async (args, words) => {
    const res = await h.call('publish_message', args).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.error).toContain(words);
  });

  it('refuses malformed filters', async () => {
    for (const filter of ['a/#/b', 'a/b+', 'a/\ud800'])
      expect((await h.call('subscribe_topic', { filter }).expect(400)).body.code).toBe('VALIDATION_ERROR');
  });

  it('truncates and flags received payloads over the cap, base64 for binary, and evicts past the total cap', async () => {
    await h.call('subscribe_topic', { filter: 'big/#', qos: 1 }).expect(200);
    const other = await peer(h.brokerUrl);
    await other.publishAsync('big/text', 'y'.repeat(40), { qos: 1 });
    await other.publishAsync('big/bin', Buffer.from([0xff, 0xfe, 0x00]), { qos: 1 });
    await other.publishAsync('big/c', 'c', { qos: 1 });
    await other.publishAsync('big/d', 'd', { qos: 1 });
    await other.endAsync();
    await until(() => h.svc.hub.stats.received === 4);
    const msgs = (await h.call('list_messages', { filter: 'big/#' }).expect(200)).body.result.messages;
    expect(msgs.map((m: { topic: string }) => m.topic)).toEqual(['big/d', 'big/c', 'big/bin']);
    expect(msgs[2]).toMatchObject({ encoding: 'base64', payload: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') });
    const status = (await h.call('get_mqtt_status', {}).expect(200)).body.result;
    expect(status).toMatchObject({ truncated: 1, evicted: 1, buffered: { messages: 3 }, embedded: true, protocolVersion: 4 });
  });

  it('speaks MCP on POST /mcp with the official SDK client (same tools as /tools/list)', async () => {
    const server = await serve(h.svc.app);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    await client.ping();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_mqtt_status',
      'list_messages',
      'publish_message',
      'subscribe_topic',
      'unsubscribe_topic',
    ]);
    await client.callTool({ name: 'subscribe_topic', arguments: { filter: 'mcp/t', qos: 1 } });
    const pub = await client.callTool({ name: 'publish_message', arguments: { topic: 'mcp/t', payload: 'via mcp', qos: 1 } });
    expect(pub.isError).toBeFalsy();
    expect(pub.structuredContent).toMatchObject({ published: true });
    const bad = await client.callTool({ name: 'publish_message', arguments: { topic: 'mcp/#', payload: 'x' } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('VALIDATION_ERROR');
    await until(() => h.svc.hub.list('mcp/t', undefined, undefined, 5).items.length === 1);
    await client.close();
    await server.stop();
  });

  it('answers /health 200 with the mqtt check', async () => {
    const { default: request } = await import('supertest');
    const res = await request(h.svc.app).get('/health').expect(200);
    expect(JSON.stringify(res.body)).toContain('mqtt');
  });
});
