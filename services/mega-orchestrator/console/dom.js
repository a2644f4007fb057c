// The console's DOM helpers. Text always goes in as text (textContent, attributes), never as HTML:
// whatever a tool, a service or a log line says is shown, never run.
/* global document, Node */

/**
 * An element: h('a', { href: '#/x', class: 'y', onclick: fn }, 'text', child, [more]).
 * Attributes whose value is false, null or undefined are left out; on* keys become listeners.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = value;
    else if (key === 'checked') el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let ids = 0;
/** A unique id for label/aria-describedby pairs. */
export const uid = (prefix) => `${prefix}-${++ids}`;

/** A scrollable table wrapper a keyboard can reach (a region with a name). */
export function scroller(label, table) {
  return h('div', { class: 'scroll', role: 'region', 'aria-label': label, tabindex: '0' }, table);
}

/** A <table> from a caption, header names and rows (arrays of cells: text or nodes). */
export function table(caption, head, rows, attrs) {
  return h(
    'table',
    attrs || {},
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** Announces a message in the page's live region (and shows it). */
export function announce(text, kind) {
  const region = document.getElementById('status');
  if (!region) return;
  region.className = `status ${kind || 'info'}`;
  region.textContent = text;
}

export const fmtTime = (iso) => {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
};

/** Pretty JSON for a <pre>. */
export const pretty = (v) => {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
};
