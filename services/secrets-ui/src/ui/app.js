// The secrets UI: served as a file so the Content-Security-Policy can forbid inline script.
// Every value reaches the page through textContent, never as HTML.
'use strict';

const state = { csrf: null, services: [], current: null };

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = state.csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (res.status === 401) {
    window.location.assign('/login');
    throw new Error('signed out');
  }
  const data = await res.json();
  if (!data.success) throw new Error(data.error);
  return data.result;
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const c of children) node.append(c);
  return node;
}

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = !message;
}

async function loadServices() {
  const result = await api('GET', '/api/services');
  state.services = result.services;
  $('store-kind').textContent = `Store: ${result.store.kind === 'vault' ? 'HashiCorp Vault (KV v2)' : 'encrypted file store'}`;
  const list = $('services');
  list.replaceChildren();
  for (const svc of state.services.filter((s) => s.variables.length > 0)) {
    const button = el('button', { type: 'button', textContent: svc.id });
    button.dataset.service = svc.id;
    button.append(el('span', { className: 'count', textContent: String(svc.variables.length) }));
    button.addEventListener('click', () => openService(svc.id));
    list.append(el('li', {}, button));
  }
}

async function openService(id) {
  state.current = id;
  showError('');
  $('restart').hidden = true;
  for (const b of document.querySelectorAll('#services button')) b.setAttribute('aria-current', String(b.dataset.service === id));
  const view = await api('GET', `/api/secrets/${encodeURIComponent(id)}`);
  renderDetail(view);
}

function renderDetail(view) {
  $('empty').hidden = true;
  $('detail').hidden = false;
  $('detail-title').textContent = view.service;
  $('detail-store').textContent = `${view.store.kind}: ${view.store.path}`;
  $('detail-version').textContent = String(view.version);
  $('detail-export').textContent = view.exportFile;
  const body = $('keys');
  body.replaceChildren();
  for (const key of view.keys) body.append(keyRow(view.service, key));
}

function keyRow(service, key) {
  const value = el('code', { className: 'value', textContent: key.set ? key.value : '(not set)' });
  const cell = el('td', {}, value);
  const reveal = el('button', { type: 'button', textContent: 'Reveal', className: 'reveal', disabled: !key.set });
  const edit = el('button', { type: 'button', textContent: 'Edit', className: 'edit' });
  const row = el(
    'tr',
    {},
    el('td', {}, el('strong', { textContent: key.name }), el('div', { className: 'desc', textContent: key.description })),
    cell,
    el('td', {}, reveal, edit),
  );
  row.dataset.key = key.name;
  let shown = false;
  reveal.addEventListener('click', async () => {
    try {
      if (shown) {
        value.textContent = key.value;
        reveal.textContent = 'Reveal';
        shown = false;
        return;
      }
      const r = await api('POST', `/api/secrets/${encodeURIComponent(service)}/reveal`, { key: key.name });
      value.textContent = r.value;
      reveal.textContent = 'Hide';
      shown = true;
    } catch (err) {
      showError(err.message);
    }
  });
  edit.addEventListener('click', () => {
    const input = el('input', { type: 'text', name: key.name, autocomplete: 'off', spellcheck: false, placeholder: 'new value' });
    const save = el('button', { type: 'button', textContent: 'Save', className: 'save' });
    const cancel = el('button', { type: 'button', textContent: 'Cancel' });
    cell.replaceChildren(input, el('div', {}, save, cancel));
    input.focus();
    cancel.addEventListener('click', () => openService(service));
    save.addEventListener('click', async () => {
      try {
        const r = await api('PUT', `/api/secrets/${encodeURIComponent(service)}`, { values: { [key.name]: input.value } });
        await openService(service);
        $('restart-text').textContent =
          `${r.set.join(', ')} written as version ${r.version}. Restart ${r.restart.services.join(', ')} to apply: ${r.restart.note}`;
        $('restart-command').textContent = r.restart.command;
        $('restart').hidden = false;
      } catch (err) {
        showError(err.message);
      }
    });
  });
  return row;
}

async function main() {
  const session = await api('GET', '/api/session');
  state.csrf = session.csrfToken;
  $('whoami').textContent = `signed in as ${session.actor}`;
  $('logout').addEventListener('click', async () => {
    await api('POST', '/logout').catch(() => undefined);
    window.location.assign('/login');
  });
  await loadServices();
}

main().catch((err) => showError(err.message));
