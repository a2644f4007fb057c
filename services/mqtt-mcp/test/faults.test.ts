import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { freePort } from '@mcp-fleet/testing/mail';
import { peer, startService, until, type Harness } from './shared';

/** A Mosquitto of the test's own on a free loopback port, persistence on in a temporary directory. */
class OwnMosquitto {
  private child?: ChildProcess;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}
  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }
  async start(store = 'store'): Promise<void> {
    const conf = path.join(this.dir, 'mosquitto.conf');
    fs.mkdirSync(path.join(this.dir, store), { recursive: true });
    fs.writeFileSync(
      conf,
      [
        `listener ${this.port} 127.0.0.1`,
        'allow_anonymous true',
        'persistence true',
        `persistence_location ${path.join(this.dir, store)}/`,
        'log_type none',
        // Run as root, Mosquitto drops to the mosquitto user, which cannot write the test's private
        // directory, and then keeps no session across a restart: stay the test's own user.
        ...(process.getuid?.() === 0 ? ['user root'] : []),
        '',
      ].join('\n'),
    );
    this.child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(this.port, '127.0.0.1', () => (s.destroy(), resolve(true)));
          s.on('error', () => resolve(false));
        }),
      5000,
    );
  }
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM'); // Mosquitto writes its persistence file on a clean stop
    });
  }
}

describeWithProgram('mosquitto', 'mosquitto', 'mqtt-mcp faults against its own Mosquitto', () => {
  let broker: OwnMosquitto;
  let tmp: ReturnType<typeof tempDir>;
  const env = () => ({ MQTT_URL: broker.url, MQTT_PROTOCOL_VERSION: 5, MQTT_CLIENT_ID: 'fault-svc' });

  beforeAll(async () => {
    tmp = tempDir('mqtt-faults-');
    broker = new OwnMosquitto(await freePort(), tmp.dir);
    await broker.start();
  });
  afterAll(async () => {
    await broker?.stop();
    tmp?.cleanup();
  });

  it('broker restart: UPSTREAM_UNAVAILABLE quickly while down, then reconnects (session kept, and resubscribed when lost) and receives', async () => {
    const data = tempDir('mqtt-faults-data-');
    const h: Harness = await startService(env(), data.dir);
    try {
      await h.call('subscribe_topic', { filter: 'f/a', qos: 1 }).expect(200);
      await h.call('subscribe_topic', { filter: 'f/gone', qos: 1 }).expect(200);
      await broker.stop();
      await until(() => !h.svc.hub.connected);
      const t0 = Date.now();
      const down = await h.call('publish_message', { topic: 'f/a', payload: 'x', qos: 1 }).expect(503);
      expect(down.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(Date.now() - t0).toBeLessThan(1000);
      // changed while the broker is away: made and removed on the next connect, though the session is kept
      expect((await h.call('subscribe_topic', { filter: 'f/late', qos: 1 }).expect(200)).body.result).toMatchObject({ established: false });
      await h.call('unsubscribe_topic', { filter: 'f/gone' }).expect(200);
      expect(h.svc.hub.subscribed).toBe(false);
      await broker.start(); // same store: the broker still has our persistent session
      await until(() => h.svc.hub.subscribed);
      expect(h.svc.hub.sessionPresent).toBe(true);
      let other = await peer(broker.url);
      await other.publishAsync('f/gone', 'not wanted', { qos: 1 });
      await other.publishAsync('f/a', 'after restart', { qos: 1 });
      await other.publishAsync('f/late', 'subscribed while away', { qos: 1 });
      await other.endAsync();
      await until(() => h.svc.hub.list('f/a', undefined, undefined, 10).items.some((m) => m.payload === 'after restart'));
      await until(() => h.svc.hub.list('f/late', undefined, undefined, 10).items.some((m) => m.payload === 'subscribed while away'));
      expect(h.svc.hub.list('f/gone', undefined, undefined, 10).items).toEqual([]);
      // a broker that lost every session (fresh store): the stored subscription is made again
      await broker.stop();
      await broker.start('fresh-store');
      await until(() => h.svc.hub.subscribed);
      expect(h.svc.hub.sessionPresent).toBe(false);
      expect((await h.call('get_mqtt_status', {}).expect(200)).body.result).toMatchObject({ connected: true, subscribed: true });
      other = await peer(broker.url);
      await other.publishAsync('f/a', 'after wipe', { qos: 1 });
      await other.endAsync();
      await until(() => h.svc.hub.list('f/a', undefined, undefined, 10).items.some((m) => m.payload === 'after wipe'));
      expect(h.svc.hub.stats.reconnects).toBeGreaterThanOrEqual(2);
    } finally {
      await h.cleanup();
      data.cleanup();
    }
  });

  it('service restart: qos 1 messages published while it was away arrive after it comes back (same DATA_DIR and client id)', async () => {
    const data = tempDir('mqtt-faults-data-');
    try {
      const first = await startService({ ...env(), MQTT_CLIENT_ID: 'fault-restart' }, data.dir);
      await first.call('subscribe_topic', { filter: 'f/queued/#', qos: 1 }).expect(200);
      await first.svc.close();
      const other = await peer(broker.url);
      await other.publishAsync('f/queued/1', 'while away', { qos: 1 });
      await other.publishAsync('f/queued/2', 'dropped at qos 0', { qos: 0 });
      await other.endAsync();
      const second = await startService({ ...env(), MQTT_CLIENT_ID: 'fault-restart' }, data.dir);
      try {
        await until(() => second.svc.hub.list('f/queued/#', undefined, undefined, 10).items.length >= 1);
        const got = second.svc.hub.list('f/queued/#', undefined, undefined, 10).items;
        expect(got.find((m) => m.topic === 'f/queued/1')).toMatchObject({ payload: 'while away', qos: 1 });
        const status = (await second.call('get_mqtt_status', {}).expect(200)).body.result;
        expect(status.subscriptions).toEqual([{ filter: 'f/queued/#', qos: 1 }]);
      } finally {
        await second.svc.close();
      }
    } finally {
      data.cleanup();
    }
  });

  it('broker down at startup: /health 200 saying so, publish UPSTREAM_UNAVAILABLE at once, subscribe stored and not established', async () => {
    const data = tempDir('mqtt-faults-data-');
    const nobody = await freePort();
    const h = await startService({ MQTT_URL: `mqtt://127.0.0.1:${nobody}`, MQTT_CLIENT_ID: 'fault-down' }, data.dir, false);
    try {
      const health = await request(h.svc.app).get('/health').expect(200);
      expect(JSON.stringify(health.body)).toContain('not connected');
      const t0 = Date.now();
      const res = await h.call('publish_message', { topic: 'f/x', payload: 'x', qos: 1 }).expect(503);
      expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(Date.now() - t0).toBeLessThan(1000);
      expect((await h.call('subscribe_topic', { filter: 'f/x', qos: 1 }).expect(200)).body.result).toMatchObject({ established: false });
      expect((await h.call('get_mqtt_status', {}).expect(200)).body.result).toMatchObject({
        connected: false,
        subscribed: false,
        embedded: false,
      });
    } finally {
      await h.cleanup();
      data.cleanup();
    }
  });
});
