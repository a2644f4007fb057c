// The history page: the logged-in caller's recorded sessions (never another principal's), and one
// session's calls by context, filterable by tool, outcome and context; each call opens to its
// arguments and its result as stored (secret-looking keys redacted, arguments cut at 1 KiB, results
// at 16 KiB with a note, media kept as a note of its size) and its outcome.

import { api } from './api.js';
import { fill, fmtTime, h, pretty, scroller, table } from './dom.js';
import { jsonBlock, renderBlocks } from './result.js';

/** A call's recorded result: the envelope's content, result or error; a note when it was cut or not recorded. */
function recordedResult(c) {
  const heading = h('h3', { class: 'small-heading' }, 'Result (as recorded: secrets redacted)');
  const label = `Result of ${c.tool}`;
  const r = c.result;
  if (r === undefined)
    return [heading, h('p', { class: 'muted small' }, 'No result was recorded: this call was made before the history kept results.')];
  if (r && r.truncated === true && typeof r.excerpt === 'string')
    return [
      heading,
      h(
        'p',
        { class: 'muted small', 'data-note': 'cut' },
        `The result was ${r.length} characters of JSON; its first ${r.excerpt.length} are kept.`,
      ),
      h('pre', { class: 'json', tabindex: '0', 'aria-label': label }, r.excerpt),
    ];
  if (!r || typeof r !== 'object') return [heading, jsonBlock(r, label)];
  const out = [heading];
  if (r.success === false) out.push(h('p', { class: 'error-text' }, `${r.code ?? 'ERROR'}: ${String(r.error ?? 'the call failed')}`));
  const blocks = r.mcp && Array.isArray(r.mcp.content) ? r.mcp.content : undefined;
  if (blocks) out.push(h('div', { 'aria-label': label, role: 'group' }, renderBlocks(blocks, `${c.tool} content block`)));
  else if (r.success === false) {
    if (r.details !== undefined) out.push(jsonBlock(r.details, `${label}: error details`));
  } else out.push(jsonBlock('result' in r ? r.result : r, label));
  return out;
}

function sessionsList(main, sessions) {
  const filter = h('input', { id: 'session-filter', type: 'search', autocomplete: 'off', 'aria-describedby': 'session-count' });
  const count = h('p', { id: 'session-count', class: 'muted', 'aria-live': 'polite' });
  const body = h('div');
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = sessions.filter((s) => !q || s.session_id.toLowerCase().includes(q) || s.transport.includes(q));
    count.textContent = `${shown.length} of ${sessions.length} sessions.`;
    fill(
      body,
      shown.length === 0
        ? h(
            'p',
            { class: 'muted' },
            sessions.length
              ? 'No session matches.'
              : 'No calls recorded for you yet: calls with a session_id (the catalog’s Run sends one) and MCP sessions are.',
          )
        : scroller(
            'Sessions',
            table(
              'Your sessions, most recent first',
              ['Session', 'Transport', 'Last call', 'Calls', 'Errors', 'Started'],
              shown.map((s) =>
                h(
                  'tr',
                  { 'data-session': s.session_id },
                  h('th', { scope: 'row' }, h('a', { href: `#/history/${encodeURIComponent(s.session_id)}` }, s.session_id)),
                  h('td', {}, s.transport),
                  h('td', {}, fmtTime(s.lastSeen)),
                  h('td', {}, String(s.calls)),
                  h('td', {}, String(s.errors)),
                  h('td', {}, fmtTime(s.createdAt)),
                ),
              ),
              { id: 'sessions' },
            ),
          ),
    );
  };
  filter.addEventListener('input', draw);
  fill(
    main,
    h('h1', {}, 'History'),
    h('div', { class: 'search' }, h('label', { for: 'session-filter' }, 'Filter sessions'), filter, count),
    body,
  );
  draw();
}

function callItem(c) {
  const outcome = c.success ? 'ok' : c.code || 'error';
  return h(
    'li',
    { 'data-call': String(c.id), 'data-tool': c.tool, 'data-outcome': outcome },
    h(
      'details',
      {},
      h(
        'summary',
        {},
        h('span', { class: 'when' }, fmtTime(c.at)),
        ' ',
        h('strong', {}, c.tool),
        ' ',
        h('span', { class: `badge ${c.success ? 'status-healthy' : 'status-unhealthy'}` }, outcome),
        ' ',
        h(
          'span',
          { class: 'muted' },
          `${Math.round(c.durationMs)} ms${c.service ? ` · ${c.service}` : ''}${c.context_id ? ` · context ${c.context_id}` : ''}`,
        ),
      ),
      h(
        'dl',
        { class: 'meta' },
        [
          ['Outcome', c.success ? 'ok' : `failed: ${c.code || 'error'}`],
          ['Service', c.service || '–'],
          ['Duration', `${c.durationMs} ms`],
          ['Transport', `${c.transport} · mode ${c.mode}`],
          ['Context', c.context_id || '–'],
        ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
      ),
      h('h3', { class: 'small-heading' }, 'Arguments (as recorded: secrets redacted)'),
      h('pre', { class: 'json', tabindex: '0', 'aria-label': `Arguments of ${c.tool}` }, pretty(c.arguments)),
      recordedResult(c),
    ),
  );
}

async function sessionView(main, id) {
  const view = await api(`/history/${encodeURIComponent(id)}?limit=500`);
  const toolFilter = h('input', { id: 'call-tool', type: 'search', autocomplete: 'off' });
  const outcomeFilter = h(
    'select',
    { id: 'call-outcome' },
    h('option', { value: '' }, 'any'),
    h('option', { value: 'ok' }, 'ok'),
    h('option', { value: 'error' }, 'failed'),
  );
  const contextFilter = h(
    'select',
    { id: 'call-context-filter' },
    h('option', { value: '*' }, 'any'),
    view.contexts.map((c) =>
      h('option', { value: c.context_id ?? '' }, `${c.context_id ?? '(none)'} · ${c.calls} calls, ${c.errors} errors`),
    ),
  );
  const count = h('p', { class: 'muted', 'aria-live': 'polite', id: 'call-count' });
  const list = h('ol', { class: 'calls', id: 'calls' });
  const draw = () => {
    const q = toolFilter.value.trim().toLowerCase();
    const shown = view.calls.filter(
      (c) =>
        (!q ||
          c.tool.toLowerCase().includes(q) ||
          String(c.service ?? '')
            .toLowerCase()
            .includes(q)) &&
        (!outcomeFilter.value || (outcomeFilter.value === 'ok') === c.success) &&
        (contextFilter.value === '*' || (c.context_id ?? '') === contextFilter.value),
    );
    count.textContent = `${shown.length} of ${view.calls.length} calls shown (${view.keptCalls} kept, ${view.totalCalls} made in all).`;
    fill(list, shown.map(callItem));
  };
  for (const el of [toolFilter, outcomeFilter, contextFilter]) el.addEventListener('input', draw);
  fill(
    main,
    h('p', {}, h('a', { href: '#/history' }, '← Sessions')),
    h('h1', {}, `Session ${view.session_id}`),
    h(
      'p',
      { class: 'muted' },
      `${view.transport} · ${view.totalCalls} calls, ${view.totalErrors} errors · since ${fmtTime(view.createdAt)} · last ${fmtTime(view.lastSeen)}`,
    ),
    h(
      'div',
      { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'call-tool' }, 'Tool or service'), toolFilter),
      h('div', { class: 'field' }, h('label', { for: 'call-outcome' }, 'Outcome'), outcomeFilter),
      h('div', { class: 'field' }, h('label', { for: 'call-context-filter' }, 'Context'), contextFilter),
    ),
    count,
    list,
  );
  draw();
}

export async function historyPage(main, rest) {
  if (rest[0]) return sessionView(main, rest[0]);
  const { sessions } = await api('/history?limit=200');
  return sessionsList(main, sessions);
}
