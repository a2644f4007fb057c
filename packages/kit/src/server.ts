import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import v8 from 'node:v8';
import type { Duplex } from 'node:stream';
import type { Logger } from './logger';
import { channelSocketPath, UPGRADE, type UpgradableListener, type Upgraded } from './channel';
import { isLoopbackInterface } from './http';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  stop(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  logger?: Logger;
  service?: string;
  /** Released after the server stops accepting connections. */
  onClose?: () => Promise<void> | void;
  shutdownTimeoutMs?: number;
  /** Time limit for receiving a request's headers and body (REQUEST_TIMEOUT_MS; default 30 s): 408 and closed after it. */
  requestTimeoutMs?: number;
  /**
   * CHANNEL_SOCKET_DIR: a listener that offers the gateway's channel also listens on a Unix socket
   * there (channelSocketPath), owner-only, served by the same HTTP server.
   */
  channelSocketDir?: string;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Listen on host:port (port 0 picks a free one).
 *
 * A request must arrive whole, headers and body, within requestTimeoutMs: a client trickling its
 * body holds a connection no longer than that (Node answers 408 and closes it). Node's clock runs
 * from a request's first byte until its last, so the answer (an SSE stream, a long tool call) and an
 * idle keep-alive connection are not limited by it. Node checks its connections every
 * connectionsCheckingInterval (30 s by default, which would double the limit): here a quarter of it, at most 1 s.
 */
export async function listen(handler: http.RequestListener, options: ListenOptions): Promise<RunningServer> {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(requestTimeout / 4))),
    },
    handler,
  );
  // The listener's upgrade handler (a kit service's channel to the gateway), if it has one; without
  // one Node refuses every upgrade.
  const upgrade = (handler as UpgradableListener)[UPGRADE];
  const upgraded = new Set<Upgraded>();
  if (upgrade)
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const connection = upgrade(req, socket, head);
      if (!connection) return;
      upgraded.add(connection);
      socket.once('close', () => upgraded.delete(connection));
    });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const unix =
    upgrade && options.channelSocketDir ? await listenChannelSocket(server, options.channelSocketDir, port, options.logger) : undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      unix?.close();
      const timer = setTimeout(() => {
        server.closeAllConnections();
        for (const c of upgraded) c.destroy();
      }, options.shutdownTimeoutMs ?? 10_000);
      timer.unref();
      server.closeIdleConnections();
      // upgraded connections (the gateway's channel) are not the server's to close: drained here
      for (const c of upgraded) c.drain();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(timer);
      await options.onClose?.();
    })());
  return { server, port, url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, stop };
}

/**
 * lstat of the socket's path, as BigInt stats. Node 20's fs.realpathSync reads the shared array the
 * last number-valued stat filled, and stops resolving a path at any cached segment when that array
 * says "socket": after a plain stat of this socket, require() took
 * services/x/node_modules/bcrypt for a real path, and bcrypt's own require('node-gyp-build') failed
 * (security-mcp's password_hash answered INTERNAL). BigInt stats fill another array.
 */
const socketStat = (file: string) => fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });

/**
 * The channel's Unix socket (CHANNEL_SOCKET_DIR): the same HTTP server on <dir>/channel-<port>.sock,
 * so that the gateway's frames to a service on this machine skip the TCP stack (two processes each
 * spent 5-9 % less CPU per call: docs/gateway.md, "The channel over a Unix socket"). The directory
 * is made owner-only (a file's permissions are what guard a socket) and must be this user's; a
 * stale socket of an earlier run is replaced, anything else at the path is left alone. Any failure
 * leaves the service on TCP alone, with a warning: the gateway then reaches the channel over TCP.
 */
async function listenChannelSocket(
  server: http.Server,
  dir: string,
  port: number,
  logger?: Logger,
): Promise<{ close(): void } | undefined> {
  const skip = (why: string) => {
    logger?.warn(`the channel's Unix socket is not offered: ${why}; the gateway reaches the channel over TCP`, { dir });
    return undefined;
  };
  const file = channelSocketPath(dir, port);
  if (!file)
    return skip(`"${dir}" is too long for a socket's path (107 bytes with channel-${port}.sock); set a shorter CHANNEL_SOCKET_DIR`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(dir);
    if (!st.isDirectory()) return skip(`"${dir}" is not a directory`);
    if (process.getuid && st.uid !== process.getuid()) return skip(`"${dir}" belongs to another user`);
    if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
    const existing = socketStat(file);
    if (existing && !existing.isSocket()) return skip(`"${file}" exists and is not a socket`);
    if (existing) fs.unlinkSync(file);
  } catch (err) {
    return skip((err as Error).message);
  }
  const unix = net.createServer((connection) => server.emit('connection', connection));
  try {
    await new Promise<void>((resolve, reject) => {
      unix.once('error', reject);
      unix.listen(file, () => {
        unix.off('error', reject);
        resolve();
      });
    });
    fs.chmodSync(file, 0o600);
  } catch (err) {
    unix.close();
    return skip((err as Error).message);
  }
  unix.on('error', (err) => logger?.warn("the channel's Unix socket failed", { err }));
  const ino = socketStat(file)?.ino;
  return {
    close: () => {
      unix.close();
      // ours still (not a later start's): removed, so that no stale socket is left behind
      try {
        if (ino !== undefined && socketStat(file)?.ino === ino) fs.rmSync(file, { force: true });
      } catch {
        // its directory is gone or unreadable: nothing left to remove
      }
    },
  };
}

/**
 * V8 settings for a service process, applied once before it serves (bootService, runService).
 *
 * Allocation-site pretenuring off: V8 starts allocating straight into the old generation at any
 * site whose objects mostly survived their first scavenge. Under load a request's objects often
 * live across one (32 calls in flight), so the sites of per-request objects (a call's request, its
 * result, its closures) were pretenured; each such object then lives in the old generation until
 * the next full GC and, dead or alive, keeps every young object it points to alive through every
 * scavenge. In the gateway that promoted about 6 KB of every MCP tools/call (scavenges 10-25 ms
 * every ~200 ms, the old generation growing by megabytes a second); off, 0.75 KB (issue 14;
 * docs/gateway.md "Performance"). A service allocates per request, where pretenuring has nothing
 * to win. The flag cannot be put in NODE_OPTIONS, so it is set here, before the first request.
 */
export function tuneHeapForServing(): void {
  if (heapTuned) return;
  heapTuned = true;
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
let heapTuned = false;

export interface RunOptions extends ListenOptions {
  logger: Logger;
  service: string;
  /** ALLOWED_HOSTS: only to warn at start when the service listens beyond loopback with none. */
  allowedHosts?: readonly string[];
}

/** server.ts of every service: listen, log, and stop cleanly on SIGTERM/SIGINT. */
export async function runService(handler: http.RequestListener, options: RunOptions): Promise<RunningServer> {
  const { logger, service } = options;
  tuneHeapForServing();
  process.on('unhandledRejection', (reason) => logger.error('unhandled promise rejection', { err: reason }));
  // A terminal's Ctrl-C reaches the whole process group and the launcher then sends SIGTERM (and a
  // user may press it twice): the first signal stops the service, the others change nothing. The
  // handlers are installed before the service listens and stay installed, so no signal ever falls
  // back to Node's default (an abrupt exit, the log unwritten); one that comes while the service
  // starts stops it as soon as it listens.
  let running: RunningServer | undefined;
  let stopping: NodeJS.Signals | undefined;
  const stop = (server: RunningServer, signal: NodeJS.Signals) => {
    logger.info(`${service} stopping`, { signal });
    const exit = async (code: number) => {
      const { closeLogger } = await import('./logger');
      await closeLogger(logger);
      process.exit(code);
    };
    server.stop().then(
      () => {
        logger.info(`${service} stopped`);
        return exit(0);
      },
      (err) => {
        logger.error('error during shutdown', { err });
        return exit(1);
      },
    );
  };
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = signal;
    if (running) stop(running, signal);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  try {
    running = await listen(handler, options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint = e.code === 'EADDRINUSE' ? ` Port ${options.port} is taken; stop what uses it or set PORT.` : '';
    logger.error(`${service} could not listen on ${options.host}:${options.port}.${hint}`, { err });
    process.exit(1);
  }
  logger.info(`${service} listening`, { url: running.url, port: running.port, pid: process.pid });
  if (!isLoopbackInterface(options.host) && !options.allowedHosts?.length)
    logger.warn(
      `${service} listens on ${options.host} but ALLOWED_HOSTS is empty: only requests for localhost, 127.0.0.1 or [::1] are answered (403 for any other Host); list the names clients call it by.`,
    );
  if (stopping) stop(running, stopping);
  return running;
}

export interface BootOptions<C extends BootConfig> {
  service: string;
  defaultPort: number;
  readConfig: () => C;
  createApp: (deps: {
    config: C;
    logger: Logger;
  }) => { app: http.RequestListener; close(): Promise<void> } | Promise<{ app: http.RequestListener; close(): Promise<void> }>;
}

export interface BootConfig {
  HOST: string;
  PORT?: number;
  LOG_LEVEL: string;
  LOG_FILE?: string;
  LOKI_URL?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  SHUTDOWN_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS?: number;
  CHANNEL_SOCKET_DIR?: string;
  DATA_DIR?: string;
  ALLOWED_HOSTS?: readonly string[];
}

/**
 * CHANNEL_SOCKET_DIR when it lies inside DATA_DIR, else undefined (with a warning). DATA_DIR is what
 * no sandboxed program sees (an empty read-only directory covers it inside a mounted root) and what
 * the file tools refuse, and the launcher refuses one that overlaps a workspace root; a socket
 * anywhere else could sit where a tool's program, which has no network at all, could connect to it.
 */
export function channelSocketDirOf(config: Pick<BootConfig, 'CHANNEL_SOCKET_DIR' | 'DATA_DIR'>, logger?: Logger): string | undefined {
  const dir = config.CHANNEL_SOCKET_DIR;
  if (!dir) return undefined;
  const rel = config.DATA_DIR ? path.relative(path.resolve(config.DATA_DIR), path.resolve(dir)) : '..';
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    logger?.warn(
      `CHANNEL_SOCKET_DIR "${dir}" is not inside DATA_DIR ("${config.DATA_DIR ?? ''}"): the channel's Unix socket is not offered there, where a tool's sandboxed program could reach it; set it inside DATA_DIR (./fleet up uses DATA_DIR/run)`,
    );
    return undefined;
  }
  return dir;
}

/** The whole of a service's server.ts: parse config (fail fast), build the app, listen, stop cleanly. */
export async function bootService<C extends BootConfig>(options: BootOptions<C>): Promise<RunningServer> {
  tuneHeapForServing();
  // A signal while the service starts (before runService handles them) is kept, not Node's abrupt default.
  let early: NodeJS.Signals | undefined;
  const keep = (signal: NodeJS.Signals) => (early ??= signal);
  process.on('SIGTERM', keep);
  process.on('SIGINT', keep);
  const { createLogger, closeLogger } = await import('./logger');
  let config: C;
  try {
    config = options.readConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const logger = createLogger({ service: options.service, level: config.LOG_LEVEL, file: config.LOG_FILE, lokiUrl: config.LOKI_URL });
  const { createTracer, setProcessTracer } = await import('./tracing');
  const tracer = await createTracer({
    service: options.service,
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    tracesUrl: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  });
  setProcessTracer(tracer);
  let service: Awaited<ReturnType<BootOptions<C>['createApp']>>;
  try {
    service = await options.createApp({ config, logger });
  } catch (err) {
    logger.error(`${options.service} failed to start: ${(err as Error).message}`, { err });
    await closeLogger(logger);
    process.exit(1);
  }
  const running = runService(service.app, {
    service: options.service,
    logger,
    host: config.HOST,
    port: config.PORT ?? options.defaultPort,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    channelSocketDir: channelSocketDirOf(config, logger),
    allowedHosts: config.ALLOWED_HOSTS,
    onClose: async () => {
      await service.close();
      await tracer.shutdown();
    },
  });
  // runService has installed its handlers (before its first await): the kept signal goes to them.
  process.off('SIGTERM', keep);
  process.off('SIGINT', keep);
  if (early) process.kill(process.pid, early);
  return running;
}
