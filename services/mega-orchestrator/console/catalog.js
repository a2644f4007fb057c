// The catalog page: search the tools, prompts and resources the logged-in caller may use; a tool's
// schema as a form checked here before the call, run through the gateway's native call path; a
// prompt's arguments and its messages; a resource read.
/* global document, performance */

import { api, newTraceparent, request } from './api.js';
import { announce, fill, h, uid } from './dom.js';
import { renderBlocks, renderCallResult, renderContents } from './result.js';
import { schemaForm } from './schema-form.js';
import { pathText, validate } from './validate.js';

let search = '';
/** The session id the console records its calls under (the history page shows it). */
let sessionId = 'console';
let contextId = '';

const link = (kind, name) => `#/catalog/${kind}/${encodeURIComponent(name)}`;
const matches = (q, ...texts) =>
  !q ||
  texts.some((t) =>
    String(t ?? '')
      .toLowerCase()
      .includes(q),
  );

function annotationBadges(a = {}) {
  const out = [];
  if (a.readOnlyHint) out.push('read-only');
  if (a.destructiveHint) out.push('destructive');
  if (a.idempotentHint) out.push('idempotent');
  if (a.openWorldHint) out.push('open world');
  return out.map((t) => h('span', { class: `badge tag tag-${t.replace(/\W+/g, '-')}` }, t));
}

function listing(main, data) {
  const results = h('div', { id: 'catalog-results' });
  const input = h('input', {
    id: 'catalog-search',
    type: 'search',
    value: search,
    autocomplete: 'off',
    'aria-describedby': 'catalog-count',
  });
  const count = h('p', { id: 'catalog-count', class: 'muted', 'aria-live': 'polite' });
  const draw = () => {
    const q = search.trim().toLowerCase();
    const tools = data.tools.filter((t) => matches(q, t.name, t.title, t.description, t.service));
    const prompts = data.prompts.filter((p) => matches(q, p.name, p.title, p.description));
    const resources = [...data.resources, ...data.resourceTemplates].filter((r) => matches(q, r.uri, r.uriTemplate, r.name, r.description));
    count.textContent = `${tools.length} tools, ${prompts.length} prompts, ${resources.length} resources${q ? ` match “${search.trim()}”` : ''}.`;
    fill(
      results,
      h('h2', {}, `Tools (${tools.length})`),
      h(
        'ul',
        { class: 'entries', id: 'tool-list' },
        tools.map((t) =>
          h(
            'li',
            { 'data-tool': t.name },
            h('a', { href: link('tool', t.name) }, t.name),
            ' ',
            h('span', { class: 'muted small' }, t.service),
            ' ',
            annotationBadges(t.annotations),
            h('p', { class: 'desc' }, t.description),
          ),
        ),
      ),
      h('h2', {}, `Prompts (${prompts.length})`),
      prompts.length
        ? h(
            'ul',
            { class: 'entries', id: 'prompt-list' },
            prompts.map((p) =>
              h(
                'li',
                { 'data-prompt': p.name },
                h('a', { href: link('prompt', p.name) }, p.name),
                h('p', { class: 'desc' }, p.description || ''),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'None.'),
      h('h2', {}, `Resources (${resources.length})`),
      resources.length
        ? h(
            'ul',
            { class: 'entries', id: 'resource-list' },
            resources.map((r) =>
              h(
                'li',
                { 'data-resource': r.uri || r.uriTemplate },
                h('a', { href: link('resource', r.uri || r.uriTemplate) }, r.name || r.uri || r.uriTemplate),
                ' ',
                h('code', { class: 'small' }, r.uri || r.uriTemplate),
                r.uriTemplate ? h('span', { class: 'badge tag' }, 'template') : null,
                h('p', { class: 'desc' }, r.description || ''),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'None.'),
    );
  };
  input.addEventListener('input', () => {
    search = input.value;
    draw();
  });
  fill(
    main,
    h('h1', {}, 'Catalog'),
    h('div', { class: 'search' }, h('label', { for: 'catalog-search' }, 'Search tools, prompts and resources'), input, count),
    results,
  );
  draw();
}

function errorSummary(problems) {
  return h(
    'div',
    { class: 'error-summary', role: 'alert', tabindex: '-1', id: 'error-summary' },
    h('h2', {}, problems.length === 1 ? 'One problem with the arguments' : `${problems.length} problems with the arguments`),
    h(
      'ul',
      {},
      problems.map((p) => h('li', {}, `${pathText(p.path)}: ${p.message}`)),
    ),
  );
}

function toolPage(main, tool) {
  const form = schemaForm(tool.inputSchema, { idPrefix: 'arg' });
  const jsonId = uid('json');
  const json = h('textarea', { id: jsonId, class: 'mono', rows: '10', spellcheck: 'false', 'aria-describedby': `${jsonId}-hint` });
  const jsonField = h(
    'div',
    { class: 'field', hidden: true },
    h('label', { for: jsonId }, 'Arguments as JSON'),
    json,
    h('p', { class: 'hint', id: `${jsonId}-hint` }, 'An object; checked against the schema like the form.'),
  );
  let jsonMode = false;
  const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Edit as JSON');
  const summary = h('div', { id: 'problems' });
  const out = h('div', { id: 'result', 'aria-live': 'polite' });
  const session = h('input', {
    id: 'call-session',
    value: sessionId,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'call-session-hint',
  });
  const context = h('input', {
    id: 'call-context',
    value: contextId,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'call-context-hint',
  });
  const mode = h('select', { id: 'call-mode' }, h('option', { value: 'auto' }, 'auto'), h('option', { value: 'primary' }, 'primary'));
  const check = h('input', { id: 'call-check', type: 'checkbox', checked: true });
  const run = h('button', { type: 'submit', id: 'run' }, 'Run');

  toggle.addEventListener('click', () => {
    summary.replaceChildren();
    if (!jsonMode) {
      json.value = JSON.stringify(form.read().value, null, 2);
    } else {
      try {
        form.set(JSON.parse(json.value || '{}'));
      } catch (err) {
        summary.replaceChildren(errorSummary([{ path: '', message: `is not valid JSON (${err.message})` }]));
        json.focus();
        return;
      }
    }
    jsonMode = !jsonMode;
    form.el.hidden = jsonMode;
    jsonField.hidden = !jsonMode;
    toggle.setAttribute('aria-pressed', String(jsonMode));
    toggle.textContent = jsonMode ? 'Edit as a form' : 'Edit as JSON';
    (jsonMode ? json : form.el.querySelector('input, select, textarea') || toggle).focus();
  });

  const formEl = h(
    'form',
    { class: 'tool-form', novalidate: true, 'aria-labelledby': 'tool-title' },
    h('h2', {}, 'Arguments'),
    form.el,
    jsonField,
    h('div', { class: 'toolbar' }, toggle),
    h(
      'fieldset',
      { class: 'group options' },
      h('legend', {}, 'Call options'),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'call-session' }, 'Session id'),
        session,
        h(
          'p',
          { class: 'hint', id: 'call-session-hint' },
          'The call is recorded in your history under this session (1-128 letters, digits, _ . : -).',
        ),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'call-context' }, 'Context id ', h('span', { class: 'opt' }, 'optional')),
        context,
        h('p', { class: 'hint', id: 'call-context-hint' }, 'Groups calls inside the session.'),
      ),
      h('div', { class: 'field' }, h('label', { for: 'call-mode' }, 'Routing mode'), mode),
      h('div', { class: 'check' }, check, h('label', { for: 'call-check' }, 'Check the arguments against the schema before sending')),
    ),
    summary,
    h('div', { class: 'toolbar' }, run),
  );

  formEl.addEventListener('submit', async (event) => {
    event.preventDefault();
    summary.replaceChildren();
    form.clearErrors();
    let args;
    let problems = [];
    if (jsonMode) {
      try {
        args = JSON.parse(json.value || '{}');
      } catch (err) {
        problems = [{ path: '', message: `is not valid JSON (${err.message})`, blocking: true }];
      }
    } else {
      const read = form.read();
      args = read.value;
      problems = read.problems;
    }
    if (check.checked && args !== undefined) {
      // what the form found (an empty list item) first, then the schema's word on everything else
      const seen = new Set(problems.map((p) => p.path));
      problems = [...problems, ...validate(tool.inputSchema, args).filter((e) => !seen.has(e.path))];
    } else {
      // unchecked: sent as it is, unless it cannot be (text that is not JSON)
      problems = problems.filter((p) => p.blocking);
    }
    if (problems.length) {
      const left = jsonMode ? problems : form.showErrors(problems);
      summary.replaceChildren(errorSummary(problems));
      announce(`Not sent: ${problems.length} problem${problems.length === 1 ? '' : 's'} with the arguments.`, 'error');
      if (jsonMode || left.length === problems.length || !form.focusFirstError()) document.getElementById('error-summary')?.focus();
      return;
    }
    sessionId = session.value.trim();
    contextId = context.value.trim();
    const { traceId, traceparent } = newTraceparent();
    run.disabled = true;
    run.textContent = 'Running…';
    const started = performance.now();
    try {
      const res = await request('/call', {
        method: 'POST',
        headers: { traceparent },
        body: {
          tool: tool.name,
          arguments: args,
          mode: mode.value,
          ...(sessionId ? { session_id: sessionId } : {}),
          ...(contextId ? { context_id: contextId } : {}),
        },
      });
      const outcome = {
        status: res.status,
        body: res.body,
        requestId: res.headers.get('x-request-id') || undefined,
        traceId,
        roundTripMs: Math.round(performance.now() - started),
      };
      fill(out, renderCallResult(outcome));
      announce(res.body?.success ? `${tool.name}: ok` : `${tool.name}: ${res.body?.code ?? 'error'}`, res.body?.success ? 'ok' : 'error');
      document.getElementById('result-title')?.focus();
    } catch (err) {
      fill(out, h('p', { class: 'error-text', role: 'alert' }, `The gateway could not be reached: ${err.message}`));
    } finally {
      run.disabled = false;
      run.textContent = 'Run';
    }
  });

  fill(
    main,
    h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')),
    h('h1', { id: 'tool-title' }, tool.name),
    h('p', {}, h('span', { class: 'muted' }, `Service ${tool.service}`), ' ', annotationBadges(tool.annotations)),
    h('p', { class: 'desc' }, tool.description),
    formEl,
    out,
  );
}

function promptPage(main, prompt) {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  const inputs = args.map((a) => {
    const id = uid('prompt-arg');
    const input = h('input', {
      id,
      name: a.name,
      autocomplete: 'off',
      'aria-required': a.required ? 'true' : undefined,
      'aria-describedby': a.description ? `${id}-hint` : undefined,
    });
    return {
      a,
      input,
      el: h(
        'div',
        { class: 'field' },
        h('label', { for: id }, a.name, a.required ? h('span', { class: 'req' }, ' required') : h('span', { class: 'opt' }, ' optional')),
        input,
        a.description ? h('p', { class: 'hint', id: `${id}-hint` }, a.description) : null,
      ),
    };
  });
  const out = h('div', { id: 'result', 'aria-live': 'polite' });
  const error = h('p', { class: 'error-text', role: 'alert' });
  const formEl = h(
    'form',
    { novalidate: true },
    inputs.map((i) => i.el),
    error,
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Get prompt')),
  );
  formEl.addEventListener('submit', async (event) => {
    event.preventDefault();
    const missing = inputs.find((i) => i.a.required && !i.input.value);
    if (missing) {
      error.textContent = `${missing.a.name} is required.`;
      missing.input.focus();
      return;
    }
    error.textContent = '';
    const values = Object.fromEntries(inputs.filter((i) => i.input.value !== '').map((i) => [i.a.name, i.input.value]));
    const res = await request('/prompts/get', { method: 'POST', body: { name: prompt.name, arguments: values } });
    if (res.status >= 400) {
      fill(out, h('p', { class: 'error-text', role: 'alert' }, `${res.body?.code ?? 'Error'}: ${res.body?.error ?? res.status}`));
      return;
    }
    fill(
      out,
      h('h2', {}, `Messages (${res.body.messages.length}) · ${res.body.durationMs} ms`),
      res.body.messages.map((m, i) =>
        h('section', { class: 'message' }, h('h3', {}, `${i + 1}. ${m.role}`), renderBlocks([m.content], 'Message content')),
      ),
    );
  });
  fill(
    main,
    h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')),
    h('h1', {}, prompt.name),
    h('p', { class: 'desc' }, prompt.description || ''),
    formEl,
    out,
  );
}

function resourcePage(main, resource) {
  const template = Boolean(resource.uriTemplate);
  const uri = h('input', {
    id: 'resource-uri',
    value: resource.uri || resource.uriTemplate,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'resource-uri-hint',
  });
  const out = h('div', { id: 'result', 'aria-live': 'polite' });
  const formEl = h(
    'form',
    { novalidate: true },
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'resource-uri' }, 'URI'),
      uri,
      h('p', { class: 'hint', id: 'resource-uri-hint' }, template ? 'Fill in the template’s {placeholders}.' : resource.mimeType || ''),
    ),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Read')),
  );
  formEl.addEventListener('submit', async (event) => {
    event.preventDefault();
    const res = await request('/resources/read', { method: 'POST', body: { uri: uri.value.trim() } });
    if (res.status >= 400) {
      fill(out, h('p', { class: 'error-text', role: 'alert' }, `${res.body?.code ?? 'Error'}: ${res.body?.error ?? res.status}`));
      return;
    }
    fill(
      out,
      h('h2', {}, `Contents (${res.body.contents.length}) · ${res.body.durationMs} ms`),
      renderContents(res.body.contents, 'Content'),
    );
  });
  fill(
    main,
    h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')),
    h('h1', {}, resource.name || resource.uri || resource.uriTemplate),
    h('p', { class: 'desc' }, resource.description || ''),
    formEl,
    out,
  );
}

export async function catalogPage(main, rest) {
  const data = await api('/catalog');
  const [kind, name] = rest;
  if (kind === 'tool') {
    const tool = data.tools.find((t) => t.name === name);
    if (tool) return toolPage(main, tool);
  } else if (kind === 'prompt') {
    const prompt = data.prompts.find((p) => p.name === name);
    if (prompt) return promptPage(main, prompt);
  } else if (kind === 'resource') {
    const resource = [...data.resources, ...data.resourceTemplates].find((r) => (r.uri || r.uriTemplate) === name);
    if (resource) return resourcePage(main, resource);
  }
  if (kind) announce(`No ${kind} “${name}” in your catalog; here is the whole of it.`, 'error');
  return listing(main, data);
}
