/**
 * mqtt-mcp: publish -> receive round trip (POST /tools/publish_message until another MQTT client
 * gets it) and publish rate through the tool at qos 0 and 1, on the embedded aedes broker and on
 * Mosquitto (BENCH_MQTT_URL, default mqtt://127.0.0.1:1883), measured in the same run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { freePort } from '@mcp-fleet/testing/mail';
import { markdownTable, runLoad, startServiceProcess, stopProcesses, type LoadResult } from '../lib';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const mosquittoUrl = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
  const loads: { broker: string; qos: number; result: LoadResult }[] = [];
  const trips: { broker: string; samples: number; p50Ms: number; p99Ms: number }[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mqtt-'));
  for (const broker of ['embedded aedes', 'mosquitto'] as const) {
    const port = await freePort();
    const embeddedPort = await freePort();
    const env = {
      DATA_DIR: path.join(dataDir, broker.replace(' ', '-')),
      MQTT_CLIENT_ID: `bench-${process.pid}`,
      MQTT_EMBEDDED_PORT: String(embeddedPort),
      ...(broker === 'mosquitto' ? { MQTT_URL: mosquittoUrl } : {}),
    };
    const child = await startServiceProcess('mqtt-mcp', env, port);
    const origin = `http://127.0.0.1:${port}`;
    const topic = `bench/${process.pid}/rt`;
    const peer = await mqtt.connectAsync(broker === 'mosquitto' ? mosquittoUrl : `mqtt://127.0.0.1:${embeddedPort}`, {
      reconnectPeriod: 0,
    });
    try {
      await peer.subscribeAsync(topic, { qos: 1 });
      const samples: number[] = [];
      const end = Date.now() + options.durationMs;
      let i = 0;
      while (Date.now() < end) {
        const payload = `rt-${i++}`;
        const got = new Promise<void>((resolve) => {
          const on = (_t: string, p: Buffer) => p.toString() === payload && (peer.off('message', on), resolve());
          peer.on('message', on);
        });
        const t0 = performance.now();
        await fetch(`${origin}/tools/publish_message`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ topic, payload, qos: 1 }),
        });
        await got;
        samples.push(performance.now() - t0);
      }
      trips.push({ broker, samples: samples.length, p50Ms: pct(samples, 50), p99Ms: pct(samples, 99) });
      process.stdout.write(`mqtt ${broker} round trip: ${samples.length} samples p50 ${pct(samples, 50)} ms p99 ${pct(samples, 99)} ms\n`);
      for (const qos of [0, 1]) {
        const result = await runLoad(
          origin,
          { path: '/tools/publish_message', body: JSON.stringify({ topic: `bench/${process.pid}/load`, payload: 'x'.repeat(100), qos }) },
          16,
          options.durationMs,
        );
        loads.push({ broker, qos, result });
        process.stdout.write(
          `mqtt ${broker} publish qos ${qos} c=16: ${result.throughput} msg/s p50 ${result.p50Ms} ms errors ${result.errors}\n`,
        );
      }
    } finally {
      await peer.endAsync();
      await stopProcesses([child]);
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  const markdown = [
    '### mqtt-mcp publish -> receive round trip (POST /tools/publish_message at qos 1 until a second MQTT client receives it)',
    '',
    markdownTable(
      ['broker', 'samples', 'p50 ms', 'p99 ms'],
      trips.map((t) => [t.broker, t.samples, t.p50Ms, t.p99Ms]),
    ),
    '',
    '### mqtt-mcp publish rate through POST /tools/publish_message (100-byte payload, concurrency 16)',
    '',
    markdownTable(
      ['broker', 'qos', 'msg/s', 'p50 ms', 'p99 ms', 'errors'],
      loads.map((r) => [r.broker, r.qos, r.result.throughput, r.result.p50Ms, r.result.p99Ms, r.result.errors]),
    ),
  ].join('\n');
  return { json: { trips, loads }, markdown };
}
