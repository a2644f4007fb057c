// The access page (admin scope): API keys listed, created with their scopes (the key shown once) and
// revoked; the virtual servers listed, created, edited and removed (through the admin API,
// /admin/servers, which writes VIRTUAL_SERVERS_FILE); the audit log read and filtered.
/* global document, URLSearchParams */

import { api, ApiError } from './api.js';
import { announce, fill, fmtTime, h, scroller, table } from './dom.js';

/** A table cell's action asked again: "<Verb> <name>?" with "Yes, <verb> <name>" (doing it) and Cancel. */
function confirmIn(cell, verb, name, yes, cancel) {
  fill(
    cell,
    h('span', { class: 'small' }, `${verb} ${name}? `),
    h('button', { type: 'button', class: 'danger small', onclick: () => void yes(name) }, `Yes, ${verb.toLowerCase()} ${name}`),
    ' ',
    h('button', { type: 'button', class: 'secondary small', onclick: () => void cancel() }, 'Cancel'),
  );
  cell.querySelector('button')?.focus();
}

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
            const confirm = () => confirmIn(cell, 'Revoke', k.name, revoke, reload);
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

/** A field's error line, shown under it and named by its control's aria-describedby. */
function fieldError(id) {
  return h('p', { class: 'field-error', id, hidden: true });
}

function showError(el, control, text) {
  el.textContent = text;
  el.hidden = !text;
  if (control && control.tagName !== 'FIELDSET') {
    if (text) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
  }
}

/**
 * The virtual servers: each one's endpoint, scope, the tools it lists and those it hides with the
 * reason; created, edited and removed here through the gateway's admin API (/admin/servers), whose
 * refusals are shown at the field they name.
 */
function serversSection() {
  const body = h('div', { id: 'virtual-servers' }, h('p', { class: 'muted' }, 'Loading…'));
  const formBox = h('div', { id: 'server-form-box' });
  let catalog = [];

  const remove = async (name) => {
    try {
      await api(`/servers/${encodeURIComponent(name)}`, { method: 'DELETE' });
      announce(`Virtual server ${name} removed; its sessions ended.`, 'ok');
    } catch (err) {
      announce(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err), 'error');
    }
    await reload();
    document.getElementById('vs-title')?.focus();
  };

  const row = (s) => {
    const actions = h('td');
    const confirm = () => confirmIn(actions, 'Remove', s.name, remove, reload);
    fill(
      actions,
      h('button', { type: 'button', class: 'secondary small', onclick: () => editForm(s) }, `Edit ${s.name}`),
      ' ',
      h('button', { type: 'button', class: 'secondary small', onclick: confirm }, `Remove ${s.name}`),
    );
    return h(
      'tr',
      { 'data-server': s.name },
      h('th', { scope: 'row' }, s.name, s.description ? h('div', { class: 'muted small' }, s.description) : ''),
      h('td', {}, h('code', { class: 'small' }, s.endpoint)),
      h('td', {}, h('code', { class: 'small' }, `server:${s.name}`)),
      h('td', {}, s.definition?.discovery ?? 'full'),
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
      actions,
    );
  };

  async function reload() {
    const { servers } = await api('/servers');
    fill(
      body,
      servers.length === 0
        ? h('p', { class: 'muted' }, 'No virtual servers are defined.')
        : scroller(
            'Virtual servers',
            table(
              'Virtual servers, their tools and the tools they hide now',
              ['Name', 'Endpoint', 'Scope', 'Discovery', 'Tools', 'Hidden now', 'Action'],
              servers.map(row),
              { id: 'server-table' },
            ),
          ),
    );
  }

  /** The form for a new server (existing undefined) or for one to change. */
  function editForm(existing) {
    const editing = existing !== undefined;
    const def = existing?.definition ?? { tools: [] };
    // a tool's renames, fixed and default arguments are kept when it stays chosen
    const kept = new Map(def.tools.map((t) => (typeof t === 'string' ? [t, t] : [t.tool, t])));
    const names = [...new Set([...catalog.map((t) => t.name), ...kept.keys()])].sort();
    const name = h('input', {
      id: 'server-name',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-required': 'true',
      'aria-describedby': 'server-name-hint server-name-error',
      value: existing?.name ?? '',
      readonly: editing,
    });
    const nameError = fieldError('server-name-error');
    const description = h('textarea', {
      id: 'server-description',
      rows: '2',
      'aria-describedby': 'server-description-error',
      value: def.description ?? '',
    });
    const descriptionError = fieldError('server-description-error');
    const discovery = h(
      'select',
      { id: 'server-discovery', 'aria-describedby': 'server-discovery-hint server-discovery-error' },
      h('option', { value: 'full' }, 'full: tools/list answers its tools'),
      h('option', { value: 'meta' }, 'meta: search, describe and call over its tools'),
    );
    discovery.value = def.discovery ?? 'full';
    const discoveryError = fieldError('server-discovery-error');
    const toolFilter = h('input', { id: 'server-tool-filter', type: 'search', autocomplete: 'off' });
    const picks = names.map((t, i) => {
      const id = `server-tool-${i}`;
      return { tool: t, input: h('input', { id, type: 'checkbox', value: t, checked: kept.has(t) }), id };
    });
    const pickList = h(
      'div',
      { class: 'tool-picks', id: 'server-tool-list' },
      picks.map((p) => h('div', { class: 'check', 'data-tool': p.tool }, p.input, h('label', { for: p.id }, h('code', {}, p.tool)))),
    );
    toolFilter.addEventListener('input', () => {
      const q = toolFilter.value.trim().toLowerCase();
      for (const p of picks) p.input.parentElement.hidden = Boolean(q) && !p.tool.toLowerCase().includes(q);
    });
    const toolsError = fieldError('server-tools-error');
    const tools = h(
      'fieldset',
      { class: 'group', id: 'server-tools', 'aria-describedby': 'server-tools-error' },
      h('legend', {}, 'Tools from the catalog'),
      h('div', { class: 'field' }, h('label', { for: 'server-tool-filter' }, 'Filter tools'), toolFilter),
      pickList,
      toolsError,
    );
    const formError = h('p', { class: 'error-text', role: 'alert', id: 'server-error' });
    const title = editing ? `Edit virtual server ${existing.name}` : 'New virtual server';
    const form = h(
      'form',
      { class: 'key-form', novalidate: true, 'aria-labelledby': 'server-form-title' },
      h('h3', { id: 'server-form-title', tabindex: '-1' }, title),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'server-name' }, 'Server name ', h('span', { class: 'req' }, 'required')),
        name,
        h(
          'p',
          { class: 'hint', id: 'server-name-hint' },
          '1-40 lower-case letters, digits or -, starting with a letter or digit: its endpoint is /servers/<name>/mcp and its scope server:<name>.',
        ),
        nameError,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'server-description' }, 'Description ', h('span', { class: 'opt' }, 'optional')),
        description,
        descriptionError,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'server-discovery' }, 'Discovery'),
        discovery,
        h('p', { class: 'hint', id: 'server-discovery-hint' }, 'How its clients find its tools.'),
        discoveryError,
      ),
      tools,
      formError,
      h(
        'div',
        { class: 'toolbar' },
        h('button', { type: 'submit' }, editing ? 'Save server' : 'Create server'),
        ' ',
        h('button', { type: 'button', class: 'secondary', onclick: () => newServerButton() }, 'Cancel'),
      ),
    );
    const fields = [
      [/^description/, descriptionError, description],
      [/^discovery/, discoveryError, discovery],
      [/^tools/, toolsError, tools],
    ];
    const clear = () => {
      showError(nameError, name, '');
      for (const [, el, control] of fields) showError(el, control, '');
      formError.textContent = '';
    };
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clear();
      const serverName = name.value.trim();
      if (!serverName) {
        showError(nameError, name, 'Give the server a name.');
        name.focus();
        return;
      }
      const chosen = picks.filter((p) => p.input.checked).map((p) => kept.get(p.tool) ?? p.tool);
      if (chosen.length === 0) {
        showError(toolsError, tools, 'Choose at least one tool.');
        picks[0]?.input.focus();
        return;
      }
      const body = { tools: chosen, discovery: discovery.value };
      if (description.value.trim()) body.description = description.value.trim();
      try {
        const out = await api(`/servers/${encodeURIComponent(serverName)}`, { method: 'PUT', body });
        announce(`Virtual server ${out.name} ${editing ? 'saved' : 'created'}: ${out.endpoint}, scope ${out.scope}.`, 'ok');
        newServerButton();
        await reload();
        document.querySelector(`#server-table tr[data-server="${out.name}"] th`)?.focus();
      } catch (err) {
        if (!(err instanceof ApiError)) {
          formError.textContent = String(err);
          return;
        }
        // each problem at its field: the admin API names the field in details[].path; a bad name in its message
        const details = Array.isArray(err.body?.details) ? err.body.details : [];
        let first;
        for (const d of details) {
          const hit = fields.find(([re]) => re.test(String(d.path)));
          if (!hit) continue;
          const [, el, control] = hit;
          showError(el, control, el.hidden ? `${d.path}: ${d.message}` : `${el.textContent}; ${d.path}: ${d.message}`);
          first ??= control;
        }
        if (!first && /server name/i.test(err.message)) {
          showError(nameError, name, err.message);
          first = name;
        }
        if (first) (first.tagName === 'FIELDSET' ? first.querySelector('input') : first)?.focus();
        else formError.textContent = `${err.code ?? 'Error'}: ${err.message}`;
      }
    });
    fill(formBox, form);
    (editing ? description : name).focus();
  }

  function newServerButton() {
    fill(formBox, h('button', { type: 'button', id: 'new-server', onclick: () => editForm(undefined) }, 'New virtual server'));
  }

  const section = h(
    'section',
    { 'aria-labelledby': 'vs-title' },
    h('h2', { id: 'vs-title', tabindex: '-1' }, 'Virtual servers'),
    h(
      'p',
      { class: 'muted small' },
      'Endpoints exposing a chosen set of tools, kept in VIRTUAL_SERVERS_FILE (changed here through the admin API, /admin/servers); a key needs server:<name> to use one.',
    ),
    body,
    formBox,
  );
  newServerButton();
  void Promise.all([api('/catalog').then((c) => (catalog = c.tools)), reload()]).catch((err) =>
    fill(body, h('p', { class: 'error-text' }, String(err.message))),
  );
  return section;
}

export async function accessPage(main, _rest, session) {
  fill(main, h('h1', {}, 'Access'), keysSection(session), serversSection(), auditSection(session));
}
