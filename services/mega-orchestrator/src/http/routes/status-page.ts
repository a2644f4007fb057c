/**
 * GET / : a status page for people. Server-rendered HTML (services with state, latency, breaker and
 * tool count; recent call rates and errors; the catalog with each tool's description and schema),
 * refreshed in place by a small script that asks for the same rendering again (`/?fragment=1`).
 * No CDN, no inline script or style: a strict Content-Security-Policy holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Express, Response } from 'express';
import type { GatewayContext } from '../../core/context';
import { servicesView, toolListing } from '../../core/views';
import { VERSION } from '../../core/config';

const UI_DIR = path.resolve(__dirname, '..', 'ui');
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const esc = (v: unknown): string =>
  String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

interface Sample {
  at: number;
  calls: number;
  errors: number;
}

type ServiceRow = {
  id: string;
  port: number;
  pattern: string;
  status: string;
  reason?: string;
  /** What the gateway's guards did to its offer (views.ts catalogGuards). */
  notice?: string;
  latencyMs?: number;
  tools: number;
  breaker: { state: string } | null;
  lastChecked: string | null;
};

export function registerStatusPage(app: Express, ctx: GatewayContext): void {
  const assets: Record<string, { type: string; body: Buffer }> = {
    '/ui/status.js': { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(path.join(UI_DIR, 'status.js')) },
    '/ui/status.css': { type: 'text/css; charset=utf-8', body: fs.readFileSync(path.join(UI_DIR, 'status.css')) },
  };
  const refreshMs = Math.min(10_000, Math.max(1000, ctx.config.HEALTH_POLL_MS));
  // Call totals seen at each rendering, for "the last minute" rates without a timer of our own.
  const samples: Sample[] = [];

  const recent = () => {
    const snap = ctx.stats.snapshot() as {
      tools: Record<string, { calls: number; errors: number; avgMs: number }>;
      errorsByCode: Record<string, number>;
      requestsProcessed: number;
    };
    const tools = Object.entries(snap.tools);
    const now: Sample = {
      at: Date.now(),
      calls: tools.reduce((n, [, t]) => n + t.calls, 0),
      errors: tools.reduce((n, [, t]) => n + t.errors, 0),
    };
    samples.push(now);
    while (samples.length > 2 && now.at - samples[1].at > 60_000) samples.shift();
    if (samples.length > 500) samples.splice(0, samples.length - 500);
    const first = samples[0];
    const seconds = Math.max(1, (now.at - first.at) / 1000);
    return {
      snap,
      tools,
      perSecond: first === now ? 0 : (now.calls - first.calls) / seconds,
      errorsRecent: now.errors - first.errors,
      window: Math.round(seconds),
    };
  };

  const renderMain = (): string => {
    const view = servicesView(ctx) as { services: ServiceRow[]; byStatus: Record<string, number> };
    const catalog = toolListing(ctx.registry.catalog);
    const r = recent();
    const healthy = view.services.filter((s) => s.status === 'healthy').length;
    const serviceRows = view.services
      .map(
        (s) => `<tr data-service="${esc(s.id)}" data-status="${esc(s.status)}">
  <td>${esc(s.id)}</td><td>${esc(s.port)}</td><td><span class="state state-${esc(s.status.replace(/\s+/g, '-'))}">${esc(s.status)}</span></td>
  <td>${s.latencyMs === undefined ? '–' : `${esc(s.latencyMs)} ms`}</td><td>${esc(s.breaker?.state ?? '–')}</td><td>${esc(s.tools)}</td>
  <td class="reason">${esc([s.reason, s.notice].filter(Boolean).join('; '))}</td></tr>`,
      )
      .join('\n');
    const toolRows = r.tools
      .sort((a, b) => b[1].calls - a[1].calls)
      .slice(0, 20)
      .map(([name, t]) => `<tr><td>${esc(name)}</td><td>${t.calls}</td><td>${t.errors}</td><td>${t.avgMs} ms</td></tr>`)
      .join('\n');
    const errors = Object.entries(r.snap.errorsByCode)
      .map(([code, n]) => `<li><code>${esc(code)}</code> ${n}</li>`)
      .join('');
    const tools = catalog
      .map(
        (
          t,
        ) => `<details data-tool="${esc(t.name)}"><summary><code>${esc(t.name)}</code> <span class="muted">${esc(t.service)}</span></summary>
<p>${esc(t.description)}</p><pre>${esc(JSON.stringify(t.inputSchema, null, 2))}</pre></details>`,
      )
      .join('\n');
    return `<section class="summary">
  <div><strong id="healthy-count">${healthy}</strong> of ${view.services.length} services healthy</div>
  <div><strong>${catalog.length}</strong> tools in the catalog</div>
  <div><strong>${r.perSecond.toFixed(2)}</strong> calls/s, <strong>${r.errorsRecent}</strong> errors (last ${r.window} s)</div>
  <div class="muted">updated <time>${esc(new Date().toISOString())}</time></div>
</section>
<section><h2>Services</h2>
<table id="services"><thead><tr><th>service</th><th>port</th><th>state</th><th>latency</th><th>breaker</th><th>tools</th><th>note</th></tr></thead>
<tbody>
${serviceRows}
</tbody></table></section>
<section class="cols"><div><h2>Busiest tools</h2>
<table id="tool-stats"><thead><tr><th>tool</th><th>calls</th><th>errors</th><th>avg</th></tr></thead><tbody>${toolRows || '<tr><td colspan="4" class="muted">no calls yet</td></tr>'}</tbody></table></div>
<div><h2>Errors by code</h2><ul id="errors">${errors || '<li class="muted">none</li>'}</ul></div></section>
<section><h2>Catalog</h2><div id="catalog">${tools}</div></section>`;
  };

  const page = (main: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-fleet status</title><link rel="stylesheet" href="/ui/status.css">
<noscript><meta http-equiv="refresh" content="${Math.round(refreshMs / 1000)}"></noscript>
<script src="/ui/status.js" defer></script></head>
<body data-refresh-ms="${refreshMs}"><header><h1>mcp-fleet</h1><p class="muted">Gateway ${esc(VERSION)} · MCP at <code>/mcp</code> ·
<a href="/services">/services</a> · <a href="/tools/list">/tools/list</a> · <a href="/stats">/stats</a> · <a href="/metrics">/metrics</a></p></header>
<main id="main">${main}</main></body></html>`;

  const secure = (res: Response) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-store');
  };

  // Browsers ask for it on every page; answering keeps it out of the error counts.
  app.get('/favicon.ico', (_req, res) => void res.status(204).end());
  app.get('/', (req, res) => {
    secure(res);
    const fragment = req.query.fragment === '1';
    res.type('html').send(fragment ? renderMain() : page(renderMain()));
  });
  for (const [route, asset] of Object.entries(assets)) {
    app.get(route, (_req, res) => {
      secure(res);
      res.setHeader('Cache-Control', 'no-cache');
      res.type(asset.type).send(asset.body);
    });
  }
}
