/**
 * A service's live log tail for the console (admins only): the last lines of its JSON log
 * (<log dir>/<service id>.log, where the launcher writes each service's LOG_FILE, or
 * <log root>/<service id>/<service id>.log when the gateway's own log is in a folder named after it, as
 * compose mounts them), then every line
 * written after, as server-sent events. The service is named by its id, looked up among the
 * inventory and the registry; no path comes from the request. The file is polled (a rename or a
 * truncation starts it over); at most MAX_STREAMS tails are open at once.
 */
import path from 'node:path';
import type { Request, Response } from 'express';
import { AppError } from '@mcp-fleet/kit';
import type { GatewayContext } from '../../core/context';
import { openRegular, parseLine, splitLines, tailLines, type FileHandle } from './files';
import { SERVICE_ID } from '../../core/config';

const POLL_MS = 500;
const KEEPALIVE_MS = 15_000;
const READ_MAX = 1024 * 1024;
export const MAX_STREAMS = 16;

/** Where the fleet's logs are: beside the gateway's own LOG_FILE, else DATA_DIR/logs (the launcher's layout). */
export function logDir(ctx: GatewayContext): string {
  return ctx.config.LOG_FILE ? path.dirname(ctx.config.LOG_FILE) : path.join(ctx.config.DATA_DIR, 'logs');
}

/** The ids whose logs may be tailed: the inventory's and the registry's. */
export function loggedServices(ctx: GatewayContext): string[] {
  return [...new Set([...ctx.inventory.map((e) => e.id), ...ctx.registry.services.map((s) => s.id)])].sort();
}

export class LogTails {
  private open = 0;

  constructor(private readonly ctx: GatewayContext) {}

  private fileOf(id: string): string {
    if (!loggedServices(this.ctx).includes(id))
      throw new AppError('NOT_FOUND', `No service "${id.slice(0, 100)}"; GET /console/api/fleet lists the services.`);
    if (id === SERVICE_ID && this.ctx.config.LOG_FILE) return this.ctx.config.LOG_FILE;
    const dir = logDir(this.ctx);
    // A folder per service, named after it (compose: each service's log volume at /logs/<id>): the others are its siblings.
    if (path.basename(dir) === SERVICE_ID) return path.join(path.dirname(dir), id, `${id}.log`);
    return path.join(dir, `${id}.log`);
  }

  /** GET /console/api/logs/:service: SSE, one `data:` event per log line (JSON), `event: reset` when the file starts over. */
  async stream(req: Request, res: Response): Promise<void> {
    const file = this.fileOf(String(req.params.service));
    if (this.open >= MAX_STREAMS)
      throw new AppError('RATE_LIMITED', `${MAX_STREAMS} log tails are open already; close one and retry.`, { retryAfter: 5 });
    let handle = await openRegular(file);
    if (!handle)
      throw new AppError('NOT_FOUND', `No log file for this service at ${file}: it is written when the launcher (./fleet up) starts it.`);
    this.open += 1;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    const send = (lines: string[]) => {
      for (const line of lines) res.write(`data: ${JSON.stringify(parseLine(line))}\n\n`);
    };
    const first = await tailLines(handle, 64 * 1024);
    send(first.lines.slice(-200));
    let offset = first.end;
    let rest = '';
    let inode = (await handle.stat()).ino;
    let closed = false;
    let busy = false;

    const follow = async () => {
      if (closed || busy) return;
      busy = true;
      try {
        const now = await openRegular(file);
        if (now && (await now.stat()).ino !== inode) {
          // Renamed away and written anew: the new file from its start.
          await handle?.close();
          handle = now;
          inode = (await now.stat()).ino;
          offset = 0;
          rest = '';
          res.write('event: reset\ndata: {}\n\n');
        } else await now?.close();
        if (!handle) return;
        const { size } = await handle.stat();
        if (size < offset) {
          offset = 0;
          rest = '';
          res.write('event: reset\ndata: {}\n\n');
        }
        if (size > offset) {
          const buf = Buffer.alloc(Math.min(size - offset, READ_MAX));
          const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
          offset += bytesRead;
          const split = splitLines(rest + buf.subarray(0, bytesRead).toString('utf8'));
          rest = split.rest.length > READ_MAX ? '' : split.rest;
          send(split.lines);
        }
      } catch (err) {
        this.ctx.logger.debug('log tail read failed', { file, err: (err as Error).message });
      } finally {
        busy = false;
      }
    };
    const poll = setInterval(() => void follow(), POLL_MS);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
    poll.unref();
    keepAlive.unref();
    res.on('close', () => {
      closed = true;
      clearInterval(poll);
      clearInterval(keepAlive);
      this.open -= 1;
      void (handle as FileHandle | undefined)?.close().catch(() => undefined);
    });
  }
}
