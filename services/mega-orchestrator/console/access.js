// The access page (admin scope): API keys listed, created with their scopes (the key shown once) and
// revoked; the virtual servers listed (read-only: VIRTUAL_SERVERS_FILE or /admin/servers define
// them); the audit log read and filtered.
/* global document, URLSearchParams */

import { api, ApiError } from './api.js';
import { announce, fill, fmtTime, h, scroller, table } from './dom.js';

const BASE_SCOPES = [
  ['tools:read', 'read-only tools of every service'],
  ['tools:write', 'every tool that is not destructive'],
  ['tools:all', 'every tool'],
  ['admin', 'this console’s keys, audit log and log tails'],
];

function keysSection(session) {
  const section = h('section', { 'aria-labelledby': 'keys-title' }, h('h2', { id: 'keys-title' }, 'API keys'));
  if (!session.keysManaged) {
    section.append(h('p', { class: 'muted' }, 'API keys are off: start the gateway with API_KEYS_FILE set to manage them here.'));
    return section;
  }
  const listEl = h('div', { id: 'keys' });
  const created = h('div', { id: 'created-key', 'aria-live': 'polite' });

  const reload = async () => {
    const { keys } = await api('/keys');
    fill(
      listEl,
      scroller(
        'API keys',
        table(
          'API keys and their scopes',
          ['Name', 'Scopes', 'Action'],
          keys.map((k) => {
            const cell = h('td');
            const confirm = () => {
              fill(
                cell,
                h('span', { class: 'small' }, `Revoke ${k.name}? `),
                h('button', { type: 'button', class: 'danger small', onclick: () => void revoke(k.name) }, `Yes, revoke ${k.name}`),
                ' ',
                h('button', { type: 'button', class: 'secondary small', onclick: () => void reload() }, 'Cancel'),
              );
              cell.querySelector('button')?.focus();
            };
            fill(cell, h('button', { type: 'button', class: 'secondary small', onclick: confirm }, `Revoke ${k.name}`));
            return h('tr', { 'data-key': k.name }, h('th', { scope: 'row' }, k.name), h('td', {}, k.scopes.join(', ')), cell);
          }),
          { id: 'key-table' },
        ),
      ),
    );
  };

  const revoke = async (name) => {
    try {
      const out = await api(`/keys/${encodeURIComponent(name)}`, { method: 'DELETE' });
      announce(
        `Key ${out.revoked} revoked${out.consoleSessionsEnded ? `; ${out.consoleSessionsEnded} console session(s) ended` : ''}.`,
        'ok',
      );
      await reload();
      document.getElementById('keys-title')?.focus();
    } catch (err) {
      announce(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err), 'error');
      await reload();
    }
  };

  const name = h('input', {
    id: 'key-name',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'key-name-hint',
    'aria-required': 'true',
  });
  const checks = BASE_SCOPES.map(([scope, what]) => {
    const id = `scope-${scope.replace(/\W+/g, '-')}`;
    return {
      scope,
      input: h('input', { id, type: 'checkbox', value: scope }),
      label: h('label', { for: id }, h('code', {}, scope), ` — ${what}`),
    };
  });
  const services = h('input', { id: 'key-services', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'key-services-hint' });
  const error = h('p', { class: 'error-text', role: 'alert', id: 'key-error' });
  const form = h(
    'form',
    { class: 'key-form', novalidate: true, 'aria-labelledby': 'new-key-title' },
    h('h3', { id: 'new-key-title' }, 'New key'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'key-name' }, 'Name ', h('span', { class: 'req' }, 'required')),
      name,
      h(
        'p',
        { class: 'hint', id: 'key-name-hint' },
        'Who or what uses it: 1-100 letters, digits, _ . @ or -. It names the caller in the audit log.',
      ),
    ),
    h(
      'fieldset',
      { class: 'group' },
      h('legend', {}, 'Scopes'),
      checks.map((c) => h('div', { class: 'check' }, c.input, c.label)),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'key-services' }, 'Service scopes ', h('span', { class: 'opt' }, 'optional')),
        services,
        h(
          'p',
          { class: 'hint', id: 'key-services-hint' },
          'Comma-separated: service:<id> (every tool of it), service:<id>:read, or server:<name> (a virtual server, with tool scopes for its tools).',
        ),
      ),
    ),
    error,
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Create key')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const scopes = [
      ...checks.filter((c) => c.input.checked).map((c) => c.scope),
      ...services.value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ];
    if (!name.value.trim()) {
      error.textContent = 'Give the key a name.';
      name.focus();
      return;
    }
    if (scopes.length === 0) {
      error.textContent = 'Choose at least one scope.';
      checks[0].input.focus();
      return;
    }
    try {
      const out = await api('/keys', { method: 'POST', body: { name: name.value.trim(), scopes } });
      const keyId = 'new-key-value';
      fill(
        created,
        h(
          'div',
          { class: 'notice ok' },
          h('h3', { tabindex: '-1', id: 'created-title' }, `Key ${out.name} created`),
          h('p', {}, 'Copy it now: it is shown once, and only its SHA-256 is stored. Send it as Authorization: Bearer <key>.'),
          h('label', { for: keyId }, 'The new key'),
          h('input', { id: keyId, readonly: true, value: out.key, class: 'mono', spellcheck: 'false' }),
          h('p', { class: 'muted small' }, `Scopes: ${out.scopes.join(', ')}`),
        ),
      );
      name.value = '';
      services.value = '';
      for (const c of checks) c.input.checked = false;
      await reload();
      document.getElementById('created-title')?.focus();
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : String(err);
    }
  });
  section.append(listEl, created, form);
  void reload().catch((err) => fill(listEl, h('p', { class: 'error-text' }, String(err.message))));
  return section;
}

function auditSection(session) {
  const section = h('section', { 'aria-labelledby': 'audit-title' }, h('h2', { id: 'audit-title' }, 'Audit log'));
  if (!session.auditLog) {
    section.append(h('p', { class: 'muted' }, 'No audit log: it is written when authorization is on, or with AUDIT_LOG_FILE set.'));
    return section;
  }
  const who = h('input', { id: 'audit-who', type: 'search', autocomplete: 'off' });
  const tool = h('input', { id: 'audit-tool', type: 'search', autocomplete: 'off' });
  const outcome = h(
    'select',
    { id: 'audit-outcome' },
    h('option', { value: '' }, 'any'),
    h('option', { value: 'ok' }, 'ok'),
    h('option', { value: 'error' }, 'failed'),
  );
  const body = h('div', { id: 'audit' });
  const load = async () => {
    const q = new URLSearchParams({ limit: '200' });
    if (who.value.trim()) q.set('who', who.value.trim());
    if (tool.value.trim()) q.set('tool', tool.value.trim());
    if (outcome.value) q.set('outcome', outcome.value);
    const out = await api(`/audit?${q}`);
    fill(
      body,
      h(
        'p',
        { class: 'muted small' },
        `${out.entries.length} entries shown, newest first (of the last ${out.scanned} lines of ${out.file}).`,
      ),
      out.entries.length === 0
        ? h('p', { class: 'muted' }, 'No entries.')
        : scroller(
            'Audit log entries',
            table(
              'Audit log, newest first',
              ['When', 'Who', 'Tool', 'Service', 'Outcome', 'Duration', 'Transport', 'Request id'],
              out.entries.map((e) =>
                h(
                  'tr',
                  { 'data-tool': String(e.tool ?? '') },
                  h('td', {}, fmtTime(e.at)),
                  h('td', {}, String(e.who ?? '')),
                  h('td', {}, String(e.tool ?? '')),
                  h('td', {}, String(e.service ?? '–')),
                  h(
                    'td',
                    {},
                    h('span', { class: `badge ${e.outcome === 'ok' ? 'status-healthy' : 'status-unhealthy'}` }, String(e.outcome ?? '')),
                  ),
                  h('td', {}, e.durationMs === undefined ? '–' : `${e.durationMs} ms`),
                  h('td', {}, String(e.transport ?? '')),
                  h('td', {}, h('code', { class: 'small' }, String(e.requestId ?? ''))),
                ),
              ),
              { id: 'audit-table' },
            ),
          ),
    );
  };
  const form = h(
    'form',
    { class: 'filters', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'audit-who' }, 'Who'), who),
    h('div', { class: 'field' }, h('label', { for: 'audit-tool' }, 'Tool'), tool),
    h('div', { class: 'field' }, h('label', { for: 'audit-outcome' }, 'Outcome'), outcome),
    h('div', { class: 'field' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load().catch((err) => announce(String(err.message), 'error'));
  });
  section.append(form, body);
  void load().catch((err) => fill(body, h('p', { class: 'error-text' }, String(err.message))));
  return section;
}

/** The virtual servers, read-only: each one's endpoint, scope, the tools it lists and those it hides with the reason. */
function serversSection() {
  const body = h('div', { id: 'virtual-servers' }, h('p', { class: 'muted' }, 'Loading…'));
  const section = h(
    'section',
    { 'aria-labelledby': 'vs-title' },
    h('h2', { id: 'vs-title' }, 'Virtual servers'),
    h(
      'p',
      { class: 'muted small' },
      'Endpoints exposing a chosen set of tools. Defined in VIRTUAL_SERVERS_FILE or through /admin/servers (docs/gateway.md); a key needs server:<name> to use one.',
    ),
    body,
  );
  void api('/servers')
    .then(({ servers }) =>
      fill(
        body,
        servers.length === 0
          ? h('p', { class: 'muted' }, 'No virtual servers are defined.')
          : scroller(
              'Virtual servers',
              table(
                'Virtual servers, their tools and the tools they hide now',
                ['Name', 'Endpoint', 'Scope', 'Tools', 'Hidden now'],
                servers.map((s) =>
                  h(
                    'tr',
                    { 'data-server': s.name },
                    h('th', { scope: 'row' }, s.name, s.description ? h('div', { class: 'muted small' }, s.description) : ''),
                    h('td', {}, h('code', { class: 'small' }, s.endpoint)),
                    h('td', {}, h('code', { class: 'small' }, `server:${s.name}`)),
                    h('td', {}, s.tools.length ? s.tools.join(', ') : '–'),
                    h(
                      'td',
                      {},
                      s.hidden.length
                        ? h(
                            'ul',
                            { class: 'entries' },
                            s.hidden.map((t) => h('li', {}, h('code', {}, t.name), ` (${t.tool}): ${t.reason}`)),
                          )
                        : '–',
                    ),
                  ),
                ),
                { id: 'server-table' },
              ),
            ),
      ),
    )
    .catch((err) => fill(body, h('p', { class: 'error-text' }, String(err.message))));
  return section;
}

export async function accessPage(main, _rest, session) {
  fill(main, h('h1', {}, 'Access'), keysSection(session), serversSection(), auditSection(session));
}
