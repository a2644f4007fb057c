// The console's shell: who is logged in (or the login form), the navigation, and the page for the
// address's #/route. Plain ES modules from the gateway itself; no framework, nothing from elsewhere.
/* global document, history, location, window, URLSearchParams */

import { api, ApiError, setCsrf, whenLoggedOut } from './api.js';
import { announce, fill, h } from './dom.js';
import { fleetPage } from './fleet.js';
import { catalogPage } from './catalog.js';
import { historyPage } from './history.js';
import { accessPage } from './access.js';
import { logsPage } from './logs.js';

const PAGES = [
  { id: 'fleet', title: 'Fleet', render: fleetPage },
  { id: 'catalog', title: 'Catalog', render: catalogPage },
  { id: 'history', title: 'History', render: historyPage },
  { id: 'access', title: 'Access', render: accessPage, admin: true },
  { id: 'logs', title: 'Logs', render: logsPage, admin: true },
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let session;
/** The running page's clean-up (timers, event streams), called before the next one renders. */
let leave = () => undefined;

function route() {
  const hash = location.hash.startsWith('#/') ? location.hash.slice(2) : 'fleet';
  const [id, ...rest] = hash.split('/');
  return { id, rest: rest.map((p) => decodeURIComponent(p)) };
}

function renderNav(current) {
  fill(
    nav,
    h(
      'ul',
      {},
      PAGES.filter((p) => !p.admin || session.admin).map((p) =>
        h('li', {}, h('a', { href: `#/${p.id}`, 'aria-current': p.id === current ? 'page' : undefined }, p.title)),
      ),
    ),
  );
}

function renderWho() {
  const text =
    session.authorization === 'off'
      ? 'Authorization off: open on this machine (Access and Logs need it on)'
      : `${session.principal?.kind === 'oauth' ? 'Token' : 'Key'} ${session.principal?.subject ?? ''}${session.admin ? ' (admin)' : ''}`;
  fill(
    who,
    h('span', { class: 'muted' }, text),
    session.via === 'cookie' ? h('button', { type: 'button', class: 'secondary small', onclick: logout }, 'Log out') : null,
  );
}

async function logout() {
  await api('/logout', { method: 'POST', body: {} }).catch(() => undefined);
  setCsrf(undefined);
  session = undefined;
  location.hash = '#/fleet';
  await start();
}

async function show() {
  leave();
  leave = () => undefined;
  const { id, rest } = route();
  const page = PAGES.find((p) => p.id === id && (!p.admin || session.admin)) || PAGES[0];
  renderNav(page.id);
  document.title = `${page.title} · mcp-fleet console`;
  fill(main, h('p', { class: 'muted' }, 'Loading…'));
  announce('');
  try {
    const cleanup = await page.render(main, rest, session);
    if (typeof cleanup === 'function') leave = cleanup;
  } catch (err) {
    fill(
      main,
      h('h1', {}, page.title),
      h('p', { class: 'error-text', role: 'alert' }, err instanceof ApiError ? `${err.code ?? 'Error'}: ${err.message}` : String(err)),
    );
  }
  // Keyboard and screen-reader users land on the new page's heading.
  const heading = main.querySelector('h1');
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  }
}

function loginForm(problem) {
  fill(nav);
  fill(who);
  document.title = 'Log in · mcp-fleet console';
  const input = h('input', {
    id: 'credential',
    name: 'credential',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'credential-hint',
  });
  const error = h('p', { id: 'login-error', class: 'error-text', role: 'alert' }, problem || '');
  // Signing in at the authorization server (AUTH_ISSUER): a plain link; the gateway does the rest.
  const signIn = session?.signIn
    ? h(
        'section',
        { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
        h('h2', { id: 'sign-in-title' }, 'Sign in'),
        h(
          'p',
          { class: 'hint', id: 'sign-in-hint' },
          'At your organization’s sign-in page (',
          h('code', {}, session.signIn.issuer),
          '); you come back here signed in.',
        ),
        h('a', { class: 'button', href: '/console/api/oauth/start', 'aria-describedby': 'sign-in-hint' }, 'Sign in with your account'),
        h('h2', {}, 'Or use a key'),
      )
    : null;
  const form = h(
    'form',
    { class: 'login', novalidate: true },
    h('label', { for: 'credential' }, 'API key or access token'),
    input,
    h(
      'p',
      { id: 'credential-hint', class: 'hint' },
      'Paste a key made with pnpm gateway-key (mcpf_…) or on the Access page. It stays on the gateway: this browser keeps only a session cookie that scripts cannot read, for 12 hours at most (30 minutes unused).',
    ),
    h('button', { type: 'submit' }, 'Log in'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!input.value.trim()) {
      error.textContent = 'Paste a key first.';
      input.focus();
      return;
    }
    try {
      session = await api('/login', { method: 'POST', body: { credential: input.value.trim() } });
      input.value = '';
      setCsrf(session.csrf);
      renderWho();
      await show();
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : String(err);
      input.focus();
    }
  });
  // a sign-in's failure stands first (the node moves out of the form)
  fill(main, h('h1', {}, 'Log in to the console'), problem ? error : null, signIn, form);
  input.focus();
}

async function start() {
  try {
    session = await api('/session');
  } catch (err) {
    fill(main, h('h1', {}, 'Console'), h('p', { class: 'error-text', role: 'alert' }, `The gateway could not be asked: ${err.message}`));
    return;
  }
  // A sign-in at the authorization server that failed comes back with what went wrong.
  const params = new URLSearchParams(location.search);
  const problem = params.get('login_error');
  if (problem !== null) history.replaceState(null, '', `${location.pathname}${location.hash}`);
  if (!session.loggedIn) return loginForm(problem ? `Sign-in failed: ${problem}` : undefined);
  setCsrf(session.csrf);
  renderWho();
  await show();
}

whenLoggedOut(() => {
  if (session && session.via !== 'cookie') return;
  session = undefined;
  leave();
  loginForm('Your session ended (logged out, expired, or its key was revoked). Log in again.');
});

window.addEventListener('hashchange', () => {
  // The skip link (#main) moves focus only; routes start with #/.
  if (session?.loggedIn && location.hash.startsWith('#/')) void show();
});

void start();
