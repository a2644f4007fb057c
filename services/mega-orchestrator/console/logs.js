// The logs page (admin scope): one service's JSON log, its last lines and then live (server-sent
// events from the gateway, which reads the fleet's log files), filtered by level and text, paused at will.
/* global EventSource, history */

import { api } from './api.js';
import { fill, h } from './dom.js';

const KEEP = 1000;
const LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'];
let chosen = '';

function lineItem(entry) {
  const { timestamp, level, message, ...extra } = entry;
  delete extra.service;
  const rest = Object.keys(extra).length ? JSON.stringify(extra) : '';
  return h(
    'li',
    { class: `log-line level-${String(level || 'none').replace(/\W+/g, '')}`, 'data-level': String(level || '') },
    h('span', { class: 'when' }, timestamp ? new Date(timestamp).toLocaleTimeString() : ''),
    ' ',
    h('span', { class: 'level' }, String(level || '-')),
    ' ',
    h('span', { class: 'msg' }, String(message ?? '')),
    rest ? h('span', { class: 'extra' }, ` ${rest.length > 2000 ? `${rest.slice(0, 2000)}…` : rest}`) : null,
  );
}

export async function logsPage(main, rest) {
  const { services } = await api('/logs');
  chosen = rest[0] || chosen || services.find((s) => s === 'mega-orchestrator') || services[0] || '';
  const select = h(
    'select',
    { id: 'log-service' },
    services.map((s) => h('option', { value: s, selected: s === chosen }, s)),
  );
  const level = h(
    'select',
    { id: 'log-level' },
    h('option', { value: '' }, 'all'),
    LEVELS.slice(0, 5).map((l) => h('option', { value: l }, `${l} and above`)),
  );
  const text = h('input', { id: 'log-text', type: 'search', autocomplete: 'off' });
  const pause = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Pause');
  const state = h('p', { class: 'muted small', id: 'log-state', 'aria-live': 'polite' });
  const list = h('ol', { class: 'log', id: 'log-lines' });
  const region = h('div', { class: 'log-region', role: 'log', 'aria-live': 'off', 'aria-label': 'Log lines', tabindex: '0' }, list);
  const entries = [];
  let paused = false;
  let source;

  const visible = (e) => {
    const max = level.value ? LEVELS.indexOf(level.value) : Infinity;
    const at = LEVELS.indexOf(String(e.level));
    const q = text.value.trim().toLowerCase();
    return (max === Infinity || (at >= 0 && at <= max)) && (!q || JSON.stringify(e).toLowerCase().includes(q));
  };
  const redraw = () => {
    const shown = entries.filter(visible);
    fill(list, shown.map(lineItem));
    region.scrollTop = region.scrollHeight;
  };
  const connect = () => {
    source?.close();
    entries.length = 0;
    fill(list);
    if (!chosen) return;
    state.textContent = `Connecting to ${chosen}…`;
    source = new EventSource(`/console/api/logs/${encodeURIComponent(chosen)}`);
    source.onopen = () => (state.textContent = `Live: ${chosen}`);
    source.onerror = () => (state.textContent = `No live log for ${chosen} (no log file yet, or the connection dropped; retrying).`);
    source.addEventListener('reset', () => {
      entries.length = 0;
      if (!paused) fill(list);
    });
    source.onmessage = (event) => {
      let entry;
      try {
        entry = JSON.parse(event.data);
      } catch {
        entry = { message: event.data };
      }
      entries.push(entry);
      if (entries.length > KEEP) entries.splice(0, entries.length - KEEP);
      if (!paused && visible(entry)) {
        list.append(lineItem(entry));
        while (list.childElementCount > KEEP) list.firstElementChild.remove();
        region.scrollTop = region.scrollHeight;
      }
    };
  };

  select.addEventListener('change', () => {
    chosen = select.value;
    history.replaceState(null, '', `#/logs/${encodeURIComponent(chosen)}`);
    connect();
  });
  level.addEventListener('change', redraw);
  text.addEventListener('input', redraw);
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    if (!paused) redraw();
  });

  fill(
    main,
    h('h1', {}, 'Logs'),
    h(
      'div',
      { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'log-service' }, 'Service'), select),
      h('div', { class: 'field' }, h('label', { for: 'log-level' }, 'Level'), level),
      h('div', { class: 'field' }, h('label', { for: 'log-text' }, 'Contains'), text),
      h('div', { class: 'field' }, pause),
    ),
    state,
    region,
  );
  connect();
  return () => source?.close();
}
