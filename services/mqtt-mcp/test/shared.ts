import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import request from 'supertest';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp, type MqttApp } from '../src/app';
import { configSchema } from '../src/config';

export interface Harness {
  svc: MqttApp;
  /** URL of the broker, for a second (independent) client. */
  brokerUrl: string;
  call: (tool: string, args: Record<string, unknown>) => request.Test;
  cleanup: () => Promise<void>;
}

export async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startService(env: Record<string, unknown>, dataDir?: string, waitConnected = true): Promise<Harness> {
  const tmp = dataDir ? undefined : tempDir('mqtt-mcp-');
  const config = configSchema.parse({
    ...testConfig,
    DATA_DIR: dataDir ?? tmp!.dir,
    MQTT_EMBEDDED_PORT: 0,
    MQTT_RECONNECT_MS: 100,
    MQTT_CONNECT_TIMEOUT_MS: 1000,
    MQTT_CLIENT_ID: `test-${randomUUID().slice(0, 8)}`,
    ...env,
  });
  const svc = createApp({ config, logger: testLogger() });
  await svc.hub.ready;
  if (waitConnected) await until(() => svc.hub.connected);
  return {
    svc,
    brokerUrl: config.MQTT_URL ?? `mqtt://127.0.0.1:${svc.hub.embeddedPort}`,
    call: (tool, args) => request(svc.app).post(`/tools/${tool}`).send(args),
    cleanup: async () => {
      await svc.close();
      tmp?.cleanup();
    },
  };
}

export function peer(url: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, { clientId: `peer-${randomUUID().slice(0, 8)}`, reconnectPeriod: 0 });
}

type Msg = { topic: string; payload: string; qos: number; retain: boolean; truncated: boolean };

/** The behaviour every broker must give: run against the embedded aedes broker and against Mosquitto. */
export function behaviourSuite(makeEnv: () => Record<string, unknown>): void {
  let h: Harness;
  let other: MqttClient;
  const root = `fleet-test/${randomUUID().slice(0, 8)}`;
  const list = async (args: Record<string, unknown>): Promise<Msg[]> =>
    (await h.call('list_messages', args).expect(200)).body.result.messages;

  beforeAll(async () => {
    h = await startService({ ...makeEnv(), MQTT_BUFFER_PER_TOPIC: 5 });
    other = await peer(h.brokerUrl);
  });
  afterAll(async () => {
    await other?.endAsync();
    await h?.cleanup();
  });

  it('publishes and receives at qos 0, 1 and 2 (service to service and from another client)', async () => {
    const sub = await h.call('subscribe_topic', { filter: `${root}/qos/#`, qos: 2 }).expect(200);
    expect(sub.body.result).toMatchObject({ established: true, grantedQos: 2 });
    for (const qos of [0, 1, 2]) {
      await h.call('publish_message', { topic: `${root}/qos/${qos}`, payload: { n: qos }, qos }).expect(200);
      await other.publishAsync(`${root}/qos/peer${qos}`, `from peer ${qos}`, { qos: qos as 0 | 1 | 2 });
    }
    await until(async () => (await list({ filter: `${root}/qos/#` })).length === 6);
    const got = await list({ filter: `${root}/qos/#` });
    expect(got.find((m) => m.topic === `${root}/qos/2`)).toMatchObject({ payload: '{"n":2}', qos: 2 });
    expect(got.find((m) => m.topic === `${root}/qos/peer1`)).toMatchObject({ payload: 'from peer 1', qos: 1 });
    // a message the service publishes reaches another client
    const seen = new Promise<string>((resolve) => other.on('message', (t, p) => t === `${root}/out` && resolve(p.toString())));
    await other.subscribeAsync(`${root}/out`, { qos: 1 });
    await h.call('publish_message', { topic: `${root}/out`, payload: 'hello', qos: 1 }).expect(200);
    expect(await seen).toBe('hello');
  });

  it('delivers the retained message to a later subscription', async () => {
    await other.publishAsync(`${root}/retained/a`, 'kept', { qos: 1, retain: true });
    await h.call('subscribe_topic', { filter: `${root}/retained/+`, qos: 1 }).expect(200);
    await until(async () => (await list({ filter: `${root}/retained/+` })).length === 1);
    expect((await list({ filter: `${root}/retained/+` }))[0]).toMatchObject({ payload: 'kept', retain: true });
    await other.publishAsync(`${root}/retained/a`, '', { qos: 1, retain: true }); // clear it on the broker
  });

  it('matches + and # wildcards and leaves other topics out', async () => {
    await h.call('subscribe_topic', { filter: `${root}/w/+/temp`, qos: 1 }).expect(200);
    for (const t of ['w/r1/temp', 'w/r2/temp', 'w/r1/hum', 'w/r1/temp/x']) await other.publishAsync(`${root}/${t}`, t, { qos: 1 });
    await other.publishAsync(`${root}/w/r3/temp`, 'last', { qos: 1 });
    await until(async () => (await list({ filter: `${root}/w/#` })).some((m) => m.payload === 'last'));
    expect((await list({ filter: `${root}/w/#` })).map((m) => m.payload).sort()).toEqual(['last', 'w/r1/temp', 'w/r2/temp']);
    expect((await list({ filter: `${root}/w/r1/+` })).map((m) => m.payload)).toEqual(['w/r1/temp']);
  });

  it('keeps order within a topic (newest first), pages with cursors and evicts the oldest past the per-topic cap', async () => {
    await h.call('subscribe_topic', { filter: `${root}/order`, qos: 1 }).expect(200);
    for (let i = 0; i < 8; i++) await other.publishAsync(`${root}/order`, String(i), { qos: 1 });
    await until(async () => (await list({ filter: `${root}/order` }))[0]?.payload === '7');
    const page1 = (await h.call('list_messages', { filter: `${root}/order`, limit: 3 }).expect(200)).body.result;
    expect(page1.messages.map((m: Msg) => m.payload)).toEqual(['7', '6', '5']);
    const page2 = (await h.call('list_messages', { filter: `${root}/order`, limit: 3, cursor: page1.nextCursor }).expect(200)).body.result;
    expect(page2.messages.map((m: Msg) => m.payload)).toEqual(['4', '3']);
    expect(page2.nextCursor).toBeUndefined();
    const status = (await h.call('get_mqtt_status', {}).expect(200)).body.result;
    expect(status.evicted).toBeGreaterThanOrEqual(3);
    expect(status.connected).toBe(true);
    expect(status.subscribed).toBe(true);
    expect(status.subscriptions.map((s: { filter: string }) => s.filter)).toContain(`${root}/order`);
  });

  it('unsubscribes: later messages are not buffered, and the filter is gone from status', async () => {
    await h.call('subscribe_topic', { filter: `${root}/u`, qos: 1 }).expect(200);
    await h.call('unsubscribe_topic', { filter: `${root}/u` }).expect(200);
    await other.publishAsync(`${root}/u`, 'ignored', { qos: 1 });
    await h.call('subscribe_topic', { filter: `${root}/u2`, qos: 1 }).expect(200);
    await other.publishAsync(`${root}/u2`, 'marker', { qos: 1 });
    await until(async () => (await list({ filter: `${root}/u2` })).length === 1);
    expect(await list({ filter: `${root}/u` })).toEqual([]);
    await h.call('unsubscribe_topic', { filter: `${root}/u` }).expect(404);
  });
}
