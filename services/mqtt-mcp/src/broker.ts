import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createBroker } from 'aedes';
import type { Logger } from '@mcp-fleet/kit';

export interface EmbeddedBroker {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** An aedes broker on a loopback port (in-memory persistence): `mosquitto_sub -p <port>` can join it. */
export async function startEmbeddedBroker(host: string, port: number, logger: Logger): Promise<EmbeddedBroker> {
  const aedes = createBroker();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  logger.info('embedded MQTT broker listening', { host, port: actual });
  return {
    url: `mqtt://${host.includes(':') ? `[${host}]` : host}:${actual}`,
    port: actual,
    close: async () => {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
