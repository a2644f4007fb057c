/**
 * Subscriptions to resources of MCP servers behind the gateway, shared: the gateway subscribes once
 * per URI at the server that serves it, however many of its own clients watch that URI (2025-era
 * sessions through resources/subscribe, 2026-07-28 subscriptions/listen streams through
 * resourceSubscriptions), and unsubscribes when the last of them stops or goes away. The server's
 * notifications/resources/updated come back through the registry ('resource-updated').
 */
import { JSONRPC_CODES, type Logger } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { DoneAnswer, Downstream } from './downstream';

/** Where the watch finds the server that serves a URI (the registry, as far as the watch needs it). */
export interface DownstreamLookup {
  get(service: string): { readonly upstream: Downstream } | undefined;
}

interface Watched {
  service: string;
  watchers: Set<string>;
  /** The server's subscription: settled once it answered (rejected: it refused). */
  ready: Promise<void>;
}

/** How many resources one session or listen stream may watch at once (a listen stream names at most this many too). */
export const MAX_WATCHED = 100;

export class ResourceWatch {
  private readonly byUri = new Map<string, Watched>();
  private readonly byWatcher = new Map<string, Set<string>>();

  constructor(
    private readonly registry: DownstreamLookup,
    private readonly options: { timeoutMs: number; logger: Logger },
  ) {}

  /** URIs subscribed to at servers now. */
  get size(): number {
    return this.byUri.size;
  }

  /**
   * The server the gateway subscribed to this URI at, for whoever watches it: the one server whose
   * notifications/resources/updated for it are passed on (provenance: a server announces only what
   * it serves, never another server's URIs or the gateway's own mega:// views, which are never subscribed here).
   */
  servedBy(uri: string): string | undefined {
    return this.byUri.get(uri)?.service;
  }

  /** The watchers of a URI (for tests and /debug). */
  watchers(uri: string): number {
    return this.byUri.get(uri)?.watchers.size ?? 0;
  }

  /** `watcher` watches `uri`, served by `service`: subscribed at the server unless already; -32602 when it cannot be. */
  async add(watcher: string, uri: string, service: string): Promise<void> {
    // a bound on what one client makes the gateway (and the servers) keep: a template or the only
    // server's unlisted URIs would otherwise let it watch as many as it can name
    const mine = this.byWatcher.get(watcher);
    if (mine && mine.size >= MAX_WATCHED && !mine.has(uri))
      throw new McpError(
        JSONRPC_CODES.INVALID_PARAMS,
        `This session watches ${MAX_WATCHED} resources already, as many as one may; unsubscribe from one (resources/unsubscribe) first.`,
        { uri: uri.slice(0, 200) },
      );
    let entry = this.byUri.get(uri);
    if (!entry || entry.service !== service) {
      const created: Watched = { service, watchers: new Set(), ready: this.send(service, 'subscribe', uri) };
      entry = created;
      this.byUri.set(uri, created);
      created.ready.catch(() => {
        if (this.byUri.get(uri) === created) this.byUri.delete(uri);
      });
    }
    await entry.ready;
    entry.watchers.add(watcher);
    let uris = this.byWatcher.get(watcher);
    if (!uris) this.byWatcher.set(watcher, (uris = new Set()));
    uris.add(uri);
  }

  /** `watcher` stops watching `uri`; the last one to stop unsubscribes at the server. */
  async remove(watcher: string, uri: string): Promise<void> {
    const uris = this.byWatcher.get(watcher);
    uris?.delete(uri);
    if (uris?.size === 0) this.byWatcher.delete(watcher);
    const entry = this.byUri.get(uri);
    if (!entry?.watchers.delete(watcher) || entry.watchers.size > 0) return;
    this.byUri.delete(uri);
    await this.send(entry.service, 'unsubscribe', uri).catch((err: Error) =>
      this.options.logger.debug(`could not unsubscribe from ${uri.slice(0, 200)} at ${entry.service}`, { err: err.message }),
    );
  }

  /** A session or listen stream ended: everything it watched. */
  async removeAll(watcher: string): Promise<void> {
    await Promise.all([...(this.byWatcher.get(watcher) ?? [])].map((uri) => this.remove(watcher, uri)));
  }

  private async send(service: string, what: 'subscribe' | 'unsubscribe', uri: string): Promise<void> {
    const upstream = this.registry.get(service)?.upstream;
    if (!upstream) throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `${service} is gone; resources/list shows what is served now.`);
    let answer: DoneAnswer;
    try {
      const options = { timeoutMs: this.options.timeoutMs };
      answer = await (what === 'subscribe' ? upstream.subscribe(uri, options) : upstream.unsubscribe(uri, options));
    } catch (err) {
      throw new McpError(JSONRPC_CODES.UPSTREAM_UNAVAILABLE, `${service} is unavailable: ${(err as Error).message}`);
    }
    if (answer.value) return;
    const { status } = answer;
    const error = (answer.json as { error?: unknown } | undefined)?.error;
    if (status === 404)
      throw new McpError(
        JSONRPC_CODES.INVALID_PARAMS,
        `${uri.slice(0, 200)} is served by ${service}, behind the gateway, which offers no resource subscriptions: read it again (resources/read) to see changes.`,
        { uri: uri.slice(0, 200) },
      );
    throw new McpError(
      status === 400 ? JSONRPC_CODES.INVALID_PARAMS : JSONRPC_CODES.UPSTREAM_ERROR,
      `${service} refused to ${what} ${uri.slice(0, 200)}: ${String(error ?? `status ${status}`).slice(0, 300)}`,
      { uri: uri.slice(0, 200) },
    );
  }
}
