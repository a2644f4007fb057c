// A tool's input schema as a form: strings, numbers and whole numbers with their bounds, enums as
// choices, booleans, nested objects as groups, arrays as lists of items (add and remove), nullable
// values; whatever the form cannot render (anyOf of several shapes, maps, tuples, ...) is a JSON text
// area for that value. Every field has a label, its constraints in words and its description;
// problems found by validate.js are shown at the field they concern.

import { h, uid } from './dom.js';
import { childPath, resolveRef } from './validate.js';

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);

/** "a.b[2]" -> "a.b" -> "a" -> "". */
const parentPath = (p) => {
  const m = /(\.[^.[\]]+|\[\d+\])$/.exec(p);
  return m ? p.slice(0, m.index) : '';
};

/** The schema with a local $ref resolved and "X or null" (type lists, anyOf with null) flattened: {s, nullable}. */
function normalize(schema, root) {
  let s = resolveRef(root, schema || {});
  let nullable = false;
  const alts = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alts && alts.length === 2 && alts.some((a) => a && a.type === 'null')) {
    const other = resolveRef(root, alts.find((a) => !(a && a.type === 'null')) || {});
    const outer = { ...s };
    delete outer.anyOf;
    delete outer.oneOf;
    s = { ...other, ...outer, description: outer.description ?? other.description };
    nullable = true;
  }
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== 'null');
    if (types.length < s.type.length) nullable = true;
    if (types.length === 1) s = { ...s, type: types[0] };
  }
  return { s, nullable };
}

/** What a schema is rendered as. */
function kindOf(s) {
  if (Array.isArray(s.enum) && s.enum.length > 0) return 'enum';
  if ('const' in s) return 'const';
  if (s.anyOf || s.oneOf || s.allOf || s.not || Array.isArray(s.type)) return 'json';
  if (PRIMITIVES.has(s.type)) return s.type === 'integer' ? 'number' : s.type;
  if (s.type === 'object' || (s.type === undefined && s.properties)) {
    return s.properties && Object.keys(s.properties).length > 0 && !(s.additionalProperties && typeof s.additionalProperties === 'object')
      ? 'object'
      : 'json';
  }
  if (s.type === 'array' && s.items && !Array.isArray(s.items) && !s.prefixItems) return 'array';
  return 'json';
}

/** The constraints of a schema in words, for the field's hint. */
function constraints(s, kind) {
  const parts = [];
  if (kind === 'json') parts.push('JSON');
  else if (s.type === 'integer') parts.push('whole number');
  else if (s.type) parts.push(String(s.type));
  const range = (min, max, unit) => {
    if (min !== undefined && max !== undefined) parts.push(`${min} to ${max}${unit}`);
    else if (min !== undefined) parts.push(`at least ${min}${unit}`);
    else if (max !== undefined) parts.push(`at most ${max}${unit}`);
  };
  range(s.minimum ?? s.exclusiveMinimum, s.maximum ?? s.exclusiveMaximum, '');
  range(s.minLength, s.maxLength, ' characters');
  range(s.minItems, s.maxItems, ' items');
  if (s.pattern) parts.push(`pattern ${s.pattern}`);
  if (s.format) parts.push(`format ${s.format}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  return parts.join(' · ');
}

/** Names of secrets (the kit's isSecretName): typed into a password field, never shown on screen. */
const SECRET_NAME = /(pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key)/i;
const LONG_TEXT = /(content|text|body|query|code|script|prompt|message|markdown|sql|patch|diff|template|description)$/i;

/**
 * Builds the form for `schema` (a tool's inputSchema). Returns its element and:
 * read() -> {value, problems}, set(value), showErrors([{path, message}]) -> the ones no field took,
 * clearErrors(), focusFirstError().
 */
export function schemaForm(schema, options = {}) {
  const root = schema || {};
  /** path -> {control, error, wrapper} */
  const slots = new Map();
  const idPrefix = options.idPrefix || 'arg';

  function slot(path, wrapper, control) {
    const error = h('p', { class: 'field-error', id: uid(`${idPrefix}-err`), hidden: true });
    wrapper.append(error);
    const described = [control.getAttribute('aria-describedby'), error.id].filter(Boolean).join(' ');
    control.setAttribute('aria-describedby', described);
    slots.set(path, { control, error, wrapper });
  }

  function labelText(name, required, nullable) {
    return [
      h('span', { class: 'name' }, name),
      required ? h('span', { class: 'req' }, ' required') : h('span', { class: 'opt' }, ' optional'),
      nullable ? h('span', { class: 'opt' }, ' (may be null)') : null,
    ];
  }

  function hintOf(s, kind) {
    const words = constraints(s, kind);
    const text = [words, s.description].filter(Boolean).join(' — ');
    return text ? h('p', { class: 'hint', id: uid(`${idPrefix}-hint`) }, text) : null;
  }

  /** One value's editor: {el, read(problems), set(value)}; `name` labels it, `path` locates its errors. */
  function node(schema, path, name, required) {
    const { s, nullable } = normalize(schema, root);
    const kind = kindOf(s);
    if (kind === 'object') return objectNode(s, path, name, required, false);
    if (kind === 'array') return arrayNode(s, path, name, required);
    const id = uid(idPrefix);
    const hint = hintOf(s, kind);
    const common = {
      id,
      name: path || name,
      'aria-describedby': hint ? hint.id : undefined,
      'aria-required': required ? 'true' : undefined,
    };
    let control;
    let read;
    let set;
    if (kind === 'boolean' && required && !nullable) {
      control = h('input', { ...common, type: 'checkbox' });
      read = () => control.checked;
      set = (v) => (control.checked = v === true);
    } else if (kind === 'boolean' || kind === 'enum' || kind === 'const') {
      const choices = kind === 'boolean' ? [true, false] : kind === 'const' ? [s.const] : s.enum;
      const all = nullable && !choices.includes(null) ? [...choices, null] : choices;
      // nothing chosen up front: a choice made for the person would send a value (and a group) they never picked
      control = h(
        'select',
        common,
        h('option', { value: '' }, required ? '— choose —' : '— not set —'),
        all.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v))),
      );
      read = () => (control.value === '' ? undefined : all[Number(control.value)]);
      set = (v) => {
        const i = all.findIndex((c) => JSON.stringify(c) === JSON.stringify(v));
        control.value = i < 0 ? '' : String(i);
      };
    } else if (kind === 'number') {
      control = h('input', {
        ...common,
        type: 'number',
        inputmode: s.type === 'integer' ? 'numeric' : 'decimal',
        step: s.type === 'integer' ? '1' : 'any',
        min: typeof s.minimum === 'number' ? s.minimum : undefined,
        max: typeof s.maximum === 'number' ? s.maximum : undefined,
        placeholder: s.default !== undefined ? String(s.default) : undefined,
      });
      read = () => {
        if (control.value.trim() === '') return nullable && control.dataset.null === '1' ? null : undefined;
        const n = Number(control.value);
        return Number.isNaN(n) ? control.value : n;
      };
      set = (v) => (control.value = typeof v === 'number' ? String(v) : '');
    } else if (kind === 'string') {
      const secret = SECRET_NAME.test(name);
      const long = !secret && ((s.maxLength === undefined && LONG_TEXT.test(name)) || s.maxLength > 500);
      control = long
        ? h('textarea', { ...common, rows: '4', spellcheck: 'false' })
        : h('input', {
            ...common,
            type: secret ? 'password' : s.format === 'email' ? 'email' : 'text',
            spellcheck: 'false',
            autocomplete: secret ? 'new-password' : 'off',
            placeholder: s.default !== undefined ? String(s.default) : undefined,
          });
      read = () => (control.value === '' ? undefined : control.value);
      set = (v) => (control.value = typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
    } else {
      control = h('textarea', { ...common, rows: '4', spellcheck: 'false', class: 'mono' });
      read = (problems) => {
        const text = control.value.trim();
        if (text === '') return undefined;
        try {
          return JSON.parse(text);
        } catch (err) {
          problems.push({ path, message: `is not valid JSON (${err.message})`, blocking: true });
          return undefined;
        }
      };
      set = (v) => (control.value = v === undefined ? '' : JSON.stringify(v, null, 2));
    }
    const wrapper = h(
      'div',
      { class: `field field-${kind}`, 'data-path': path },
      kind === 'boolean' && control.tagName === 'INPUT'
        ? h('div', { class: 'check' }, control, h('label', { for: id }, labelText(name, required, nullable)))
        : h('label', { for: id }, labelText(name, required, nullable)),
      kind === 'boolean' && control.tagName === 'INPUT' ? null : control,
      hint,
    );
    slot(path, wrapper, control);
    return { el: wrapper, read: (problems) => read(problems), set };
  }

  function objectNode(s, path, name, required, isRoot) {
    const props = s.properties || {};
    const requiredNames = new Set(Array.isArray(s.required) ? s.required : []);
    const children = Object.keys(props).map((key) => [key, node(props[key], childPath(path, key), key, requiredNames.has(key))]);
    const hint = isRoot ? null : hintOf({ description: s.description }, 'object');
    const body = children.map(([, child]) => child.el);
    const el = isRoot
      ? h('div', { class: 'fields' }, body)
      : h(
          'fieldset',
          { class: 'group', 'data-path': path },
          h('legend', {}, labelText(name, required, false)),
          hint,
          body,
          children.length === 0 ? h('p', { class: 'hint' }, 'No fields.') : null,
        );
    if (!isRoot) {
      // errors about the group itself (a missing required object)
      const legend = el.querySelector('legend');
      const error = h('p', { class: 'field-error', id: uid(`${idPrefix}-err`), hidden: true });
      el.insertBefore(error, legend.nextSibling);
      slots.set(path, { control: el, error, wrapper: el });
    }
    return {
      el,
      read: (problems) => {
        const out = {};
        for (const [key, child] of children) {
          const v = child.read(problems);
          if (v !== undefined) out[key] = v;
        }
        return Object.keys(out).length === 0 && !required && !isRoot ? undefined : out;
      },
      set: (v) => {
        for (const [key, child] of children) child.set(v && typeof v === 'object' ? v[key] : undefined);
      },
    };
  }

  function arrayNode(s, path, name, required) {
    const list = h('ol', { class: 'items' });
    let items = [];
    const hint = hintOf({ ...s, type: undefined }, 'array');
    const addButton = h('button', { type: 'button', class: 'secondary small' }, `Add ${name} item`);
    const legendId = uid(`${idPrefix}-legend`);
    const el = h(
      'fieldset',
      { class: 'group array', 'data-path': path, 'aria-describedby': hint ? hint.id : undefined },
      h('legend', { id: legendId }, labelText(name, required, false)),
      hint,
      list,
      addButton,
    );
    const error = h('p', { class: 'field-error', id: uid(`${idPrefix}-err`), hidden: true });
    el.insertBefore(error, list);
    slots.set(path, { control: addButton, error, wrapper: el });

    const render = (values) => {
      for (const key of [...slots.keys()]) if (key.startsWith(`${path}[`)) slots.delete(key);
      items = values.map((v, i) => {
        const child = node(s.items, childPath(path, i), `${name} item ${i + 1}`, true);
        child.set(v);
        const remove = h(
          'button',
          { type: 'button', class: 'secondary small', onclick: () => removeAt(i) },
          `Remove ${name} item ${i + 1}`,
        );
        return { child, li: h('li', {}, child.el, remove) };
      });
      list.replaceChildren(...items.map((it) => it.li));
    };
    const current = () => items.map((it) => it.child.read([]));
    const removeAt = (i) => {
      const values = current();
      values.splice(i, 1);
      render(values);
      (list.querySelectorAll('li')[Math.min(i, values.length - 1)]?.querySelector('input, select, textarea') || addButton).focus();
    };
    addButton.addEventListener('click', () => {
      render([...current(), undefined]);
      list.lastElementChild?.querySelector('input, select, textarea')?.focus();
    });
    return {
      el,
      read: (problems) => {
        const values = items.map((it, i) => {
          const v = it.child.read(problems);
          if (v === undefined) problems.push({ path: childPath(path, i), message: 'is empty: fill it in or remove it' });
          return v === undefined ? null : v;
        });
        return values.length === 0 && !required ? undefined : values;
      },
      set: (v) => render(Array.isArray(v) ? v : []),
    };
  }

  const { s: top } = normalize(root, root);
  const whole = kindOf(top) === 'object' ? objectNode(top, '', 'arguments', true, true) : node(top, '', 'arguments', true);

  const clearErrors = () => {
    for (const { control, error } of slots.values()) {
      error.hidden = true;
      error.textContent = '';
      if (control.tagName !== 'FIELDSET') control.removeAttribute('aria-invalid');
    }
  };

  return {
    el: whole.el,
    read() {
      const problems = [];
      const value = whole.read(problems);
      return { value: value === undefined ? {} : value, problems };
    },
    set: (value) => whole.set(value),
    clearErrors,
    /** Shows each error at the nearest field; returns those no field took (for the summary only). */
    showErrors(errors) {
      clearErrors();
      const left = [];
      for (const e of errors) {
        let p = e.path;
        while (p && !slots.has(p)) p = parentPath(p);
        const target = slots.get(p);
        if (!target || !p) {
          left.push(e);
          continue;
        }
        target.error.hidden = false;
        target.error.textContent = target.error.textContent ? `${target.error.textContent}; ${e.message}` : `${e.path}: ${e.message}`;
        if (target.control.tagName !== 'FIELDSET') target.control.setAttribute('aria-invalid', 'true');
      }
      return left;
    },
    focusFirstError() {
      for (const { control, error } of slots.values()) {
        if (!error.hidden) {
          control.focus();
          return true;
        }
      }
      return false;
    },
  };
}
