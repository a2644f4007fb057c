// The fleet page: every service with its health, why one is missing, its breaker, restarts and
// latency; the MCP servers behind the gateway with their transport and protocol era. Refreshed every
// few seconds while open.
/* global setInterval, clearInterval */

import { api } from './api.js';
import { fill, fmtTime, h, scroller, table } from './dom.js';

const REFRESH_MS = 5000;

const badge = (status) => h('span', { class: `badge status-${String(status).replace(/[^a-z]+/gi, '-')}` }, status);

function breakerText(b) {
  if (!b) return '–';
  const failures = b.consecutiveFailures ?? 0;
  const extra = failures > 0 ? ` (${failures} failure${failures === 1 ? '' : 's'} in a row)` : '';
  return `${b.state}${extra}`;
}

function render(body, data) {
  const services = data.services;
  const healthy = services.filter((s) => s.status === 'healthy').length;
  const mcp = services.filter((s) => s.mcp);
  const g = data.gateway;
  fill(
    body,
    h(
      'ul',
      { class: 'cards', 'aria-label': 'Summary' },
      h('li', {}, h('strong', { id: 'healthy-count' }, `${healthy} of ${services.length}`), ' services healthy'),
      h('li', {}, h('strong', {}, String(g.tools)), ' tools in the catalog'),
      h('li', {}, h('strong', {}, String(g.mcpSessions)), ' MCP sessions'),
      h('li', {}, 'Gateway ', h('strong', {}, g.version), `, up ${Math.round(g.uptimeSeconds / 60)} min, authorization ${g.authorization}`),
    ),
    h('h2', {}, 'Services'),
    scroller(
      'Services',
      table(
        'Every service: health, reason, breaker, restarts',
        ['Service', 'Status', 'Why', 'Breaker', 'Restarts', 'Latency', 'Tools', 'Last check'],
        services.map((s) =>
          h(
            'tr',
            { 'data-service': s.id, 'data-status': s.status },
            h('th', { scope: 'row' }, s.id, h('div', { class: 'muted small' }, s.pattern)),
            h('td', {}, badge(s.status)),
            h('td', { class: 'reason' }, s.reason || (s.launcher?.error ? `launcher: ${s.launcher.error}` : '')),
            h('td', {}, breakerText(s.breaker)),
            h('td', {}, s.restarts === undefined ? '–' : `${s.restarts}${s.restartsBy ? ` (${s.restartsBy})` : ''}`),
            h('td', {}, s.latencyMs === undefined ? '–' : `${s.latencyMs} ms`),
            h('td', {}, String(s.tools)),
            h('td', {}, fmtTime(s.lastChecked)),
          ),
        ),
        { id: 'services' },
      ),
    ),
    h('h2', {}, 'MCP servers behind the gateway'),
    mcp.length === 0
      ? h('p', { class: 'muted' }, 'None configured (MCP_SERVERS_FILE, MCP_SERVERS, or the inventory’s stdio servers).')
      : scroller(
          'MCP servers',
          table(
            'MCP servers: transport, protocol era, starts',
            ['Server', 'Status', 'Transport', 'Protocol era', 'Starts', 'Process', 'Address'],
            mcp.map((s) =>
              h(
                'tr',
                { 'data-server': s.id },
                h('th', { scope: 'row' }, s.id),
                h('td', {}, badge(s.status)),
                h('td', {}, s.mcp.transport),
                h('td', {}, s.era === '2026-07-28' ? '2026-07-28 (stateless)' : '2025 (initialize, sessions)'),
                h('td', {}, String(s.mcp.starts)),
                h('td', {}, s.mcp.pid ? `pid ${s.mcp.pid}` : '–'),
                h('td', {}, h('code', {}, s.url || '')),
              ),
            ),
            { id: 'mcp-servers' },
          ),
        ),
    h(
      'p',
      { class: 'muted small' },
      data.gateway.launcherState
        ? `Restarts of fleet services as the launcher counted them (DATA_DIR/fleet.json, written ${fmtTime(data.gateway.launcherState)}).`
        : 'Not started by ./fleet up: restarts of fleet services are not known here (MCP servers’ are counted by the gateway).',
    ),
  );
}

export async function fleetPage(main) {
  const body = h('div', { id: 'fleet' });
  const stamp = h('span', { class: 'muted small' });
  const refresh = async () => {
    const data = await api('/fleet');
    render(body, data);
    stamp.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  };
  fill(
    main,
    h('h1', {}, 'Fleet'),
    h(
      'div',
      { class: 'toolbar' },
      h('button', { type: 'button', class: 'secondary', onclick: () => void refresh().catch(() => undefined) }, 'Refresh now'),
      stamp,
    ),
    body,
  );
  await refresh();
  const timer = setInterval(() => void refresh().catch(() => undefined), REFRESH_MS);
  return () => clearInterval(timer);
}
