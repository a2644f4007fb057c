import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { request as undiciRequest } from 'undici';
import { displayUrl } from './http-client';

export interface ProviderReport {
  id: string;
  kind: 'llm' | 'embeddings' | 'speech-to-text' | 'research' | 'mail' | 'marketplace';
  description: string;
  configured: boolean;
  /** Where it is, without credentials or query string. */
  url?: string;
  /** Set only when the gateway probed it; null when there is nothing to probe. */
  reachable: boolean | null;
  latencyMs?: number;
  error?: string;
  detail?: Record<string, unknown>;
}

/** What /providers reads of the gateway's configuration (core/config.ts's Config has these; passed in, not imported). */
export interface ProbeConfig {
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  EMBEDDINGS_URL?: string;
  EMBEDDINGS_API_KEY?: string;
  STT_URL?: string;
  RESEARCH_SOURCES: string[];
  SMTP_URL?: string;
  IMAP_URL?: string;
  MARKETPLACE_URL?: string;
  MARKETPLACE_JWT_TOKEN?: string;
  /** The downstreams (the marketplace's URL when MARKETPLACE_URL is unset). */
  downstreams?: readonly { id: string; url: string }[];
  PROVIDER_PROBE_TTL_MS: number;
  PROVIDER_PROBE_TIMEOUT_MS: number;
  /** Where the local programs probed are looked for. */
  PATH?: string;
}

const DEFAULT_PORTS: Record<string, number> = { 'smtp:': 25, 'smtps:': 465, 'imap:': 143, 'imaps:': 993 };

async function probeHttp(url: string, timeoutMs: number): Promise<Pick<ProviderReport, 'reachable' | 'latencyMs' | 'error' | 'detail'>> {
  const started = performance.now();
  try {
    // undici does not follow redirects unless asked to; it is loaded at the first probe, not at start.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { request } = require('undici') as { request: typeof undiciRequest };
    const res = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    res.body.resume();
    return { reachable: true, latencyMs: Math.round(performance.now() - started), detail: { status: res.statusCode } };
  } catch (err) {
    const e = err as { code?: string; name?: string; message: string };
    const error = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : (e.code ?? e.message);
    return { reachable: false, latencyMs: Math.round(performance.now() - started), error };
  }
}

function probeTcp(url: string, timeoutMs: number): Promise<Pick<ProviderReport, 'reachable' | 'latencyMs' | 'error'>> {
  const started = performance.now();
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      resolve({ reachable: false, error: 'invalid URL' });
      return;
    }
    const port = Number(u.port || DEFAULT_PORTS[u.protocol] || 0);
    const socket = net.connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (r: Pick<ProviderReport, 'reachable' | 'error'>) => {
      socket.destroy();
      resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    };
    socket.setTimeout(timeoutMs, () => done({ reachable: false, error: `timed out after ${timeoutMs} ms` }));
    socket.once('connect', () => done({ reachable: true }));
    socket.once('error', (err: NodeJS.ErrnoException) => done({ reachable: false, error: err.code ?? err.message }));
  });
}

async function findExecutable(names: string[], pathVar: string | undefined): Promise<string | undefined> {
  const dirs = (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter).filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      try {
        await fs.access(file, fs.constants.X_OK);
        return file;
      } catch {
        // keep looking
      }
    }
  }
  return undefined;
}

/**
 * GET /providers: the outside providers the fleet can use, configured or not, reachable or not.
 * Probes are cheap (one GET or TCP connect) and cached; no key or URL credential is ever shown.
 */
export class Providers {
  private cached?: { at: number; report: Promise<{ checkedAt: string; providers: ProviderReport[] }> };

  constructor(private readonly config: ProbeConfig) {}

  report(): Promise<{ checkedAt: string; providers: ProviderReport[] }> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < this.config.PROVIDER_PROBE_TTL_MS) return this.cached.report;
    const report = this.probeAll();
    this.cached = { at: now, report };
    report.catch(() => (this.cached = undefined));
    return report;
  }

  private async probeAll(): Promise<{ checkedAt: string; providers: ProviderReport[] }> {
    const c = this.config;
    const t = c.PROVIDER_PROBE_TIMEOUT_MS;
    const http = async (
      base: Omit<ProviderReport, 'configured' | 'reachable'>,
      url: string | undefined,
      extra: Record<string, unknown> = {},
    ) => {
      if (!url)
        return { ...base, configured: false, reachable: null, ...(Object.keys(extra).length ? { detail: extra } : {}) } as ProviderReport;
      const probe = await probeHttp(displayUrl(url), t);
      return { ...base, configured: true, url: displayUrl(url), ...probe, detail: { ...extra, ...probe.detail } } as ProviderReport;
    };
    const tcp = async (base: Omit<ProviderReport, 'configured' | 'reachable'>, url: string | undefined) => {
      if (!url) return { ...base, configured: false, reachable: null } as ProviderReport;
      return { ...base, configured: true, url: displayUrl(url), ...(await probeTcp(url, t)) } as ProviderReport;
    };
    const speech = async (): Promise<ProviderReport> => {
      const base = { id: 'speech-to-text', kind: 'speech-to-text' as const, description: 'Speech to text for transcriber-mcp.' };
      if (c.STT_URL) return http({ ...base, description: `${base.description} OpenAI-compatible transcription endpoint.` }, c.STT_URL);
      const [ffmpeg, sphinx] = await Promise.all([
        findExecutable(['ffmpeg'], c.PATH),
        findExecutable(['pocketsphinx', 'pocketsphinx_continuous'], c.PATH),
      ]);
      return {
        ...base,
        description: `${base.description} Local backend: ffmpeg + pocketsphinx (set STT_URL for a remote one).`,
        configured: Boolean(ffmpeg && sphinx),
        reachable: null,
        detail: { backend: 'local', ffmpeg: Boolean(ffmpeg), pocketsphinx: Boolean(sphinx) },
      };
    };
    const research = c.RESEARCH_SOURCES.map(async (source, i): Promise<ProviderReport> => {
      const isUrl = /^https?:\/\//i.test(source);
      const base = { id: `research-${i + 1}`, kind: 'research' as const, description: 'A research source for research-mcp.' };
      if (!isUrl) return { ...base, configured: true, reachable: null, detail: { source } };
      return http(base, source);
    });
    // the fleet's own marketplace is a downstream of the gateway (MARKETPLACE_MCP_URL/_PORT): running, it is configured
    const marketplaceUrl = c.MARKETPLACE_URL ?? c.downstreams?.find((d) => d.id === 'marketplace-mcp')?.url;
    const providers = await Promise.all([
      http({ id: 'llm', kind: 'llm', description: 'OpenAI-compatible LLM endpoint (LLM_BASE_URL).' }, c.LLM_BASE_URL, {
        apiKeyConfigured: Boolean(c.LLM_API_KEY),
      }),
      c.EMBEDDINGS_URL
        ? http(
            { id: 'embeddings', kind: 'embeddings', description: 'OpenAI-compatible /v1/embeddings endpoint (EMBEDDINGS_URL).' },
            c.EMBEDDINGS_URL,
            {
              apiKeyConfigured: Boolean(c.EMBEDDINGS_API_KEY),
            },
          )
        : Promise.resolve<ProviderReport>({
            id: 'embeddings',
            kind: 'embeddings',
            description: 'Embeddings: the local deterministic text embedder (set EMBEDDINGS_URL for a remote one).',
            configured: true,
            reachable: null,
            detail: { backend: 'local' },
          }),
      speech(),
      ...research,
      tcp(
        {
          id: 'smtp',
          kind: 'mail',
          description: 'Outgoing mail server for mail-mcp (SMTP_URL); unset: mail_send and mail_forward answer NOT_CONFIGURED.',
        },
        c.SMTP_URL,
      ),
      tcp(
        {
          id: 'imap',
          kind: 'mail',
          description: 'Incoming mail server for mail-mcp (IMAP_URL); unset: its reading tools answer NOT_CONFIGURED.',
        },
        c.IMAP_URL,
      ),
      http(
        {
          id: 'marketplace',
          kind: 'marketplace',
          description:
            "Skill marketplace (MARKETPLACE_URL; unset: marketplace-mcp where the gateway reaches it, when it is one of the gateway's services).",
        },
        marketplaceUrl,
        { tokenConfigured: Boolean(c.MARKETPLACE_JWT_TOKEN) },
      ),
    ]);
    if (c.RESEARCH_SOURCES.length === 0) {
      providers.splice(3, 0, {
        id: 'research',
        kind: 'research',
        description: 'Research sources for research-mcp (RESEARCH_SOURCES, comma-separated names or URLs).',
        configured: false,
        reachable: null,
      });
    }
    return { checkedAt: new Date().toISOString(), providers };
  }
}
