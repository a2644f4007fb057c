// Client-side checks of tool arguments against the tool's JSON Schema (the subset tools use: types,
// enum/const, required, properties, additionalProperties, string and number bounds, pattern, array
// bounds and items, anyOf/oneOf/allOf/not, local $ref). It only helps a person before the call: the
// service validates every call again, and a keyword not known here is left to it.

const MAX_DEPTH = 64;

/** The JSON type names a value has ("integer" also counts as "number"). */
function typesOf(value) {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return [typeof value];
}

const show = (v) => {
  const text = JSON.stringify(v);
  return text === undefined ? String(v) : text.length > 60 ? `${text.slice(0, 57)}…` : text;
};

/** Path text for messages: "(arguments)", "items[2].name". */
export const pathText = (path) => path || '(arguments)';
export const childPath = (path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/** Resolves a local "$ref" (#/$defs/x, #/definitions/x) against the root schema. */
export function resolveRef(root, schema) {
  let s = schema;
  for (let i = 0; i < 16 && s && typeof s.$ref === 'string'; i++) {
    if (!s.$ref.startsWith('#')) return {};
    const target = s.$ref
      .slice(1)
      .split('/')
      .filter(Boolean)
      .reduce((node, part) => (node ? node[decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'))] : undefined), root);
    if (!target) return {};
    const rest = { ...s };
    delete rest.$ref;
    s = { ...target, ...rest };
  }
  return s || {};
}

const deepEqual = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Every problem of `value` against `schema`: [{path, message}] (empty: valid as far as this checker knows). */
export function validate(schema, value, root, path = '', depth = 0) {
  const errors = [];
  if (depth > MAX_DEPTH || schema === true || schema === undefined || schema === null) return errors;
  if (schema === false) return [{ path, message: `${pathText(path)} is not allowed` }];
  const s = resolveRef(root || schema, schema);
  const rootSchema = root || schema;
  const add = (message, at = path) => errors.push({ path: at, message });

  if (s.type !== undefined) {
    const wanted = Array.isArray(s.type) ? s.type : [s.type];
    if (!typesOf(value).some((t) => wanted.includes(t))) {
      add(
        `must be ${wanted.map((t) => (t === 'integer' ? 'a whole number' : t === 'array' || t === 'object' ? `an ${t}` : `a ${t}`)).join(' or ')}`,
      );
      return errors;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value))) add(`must be one of: ${s.enum.map(show).join(', ')}`);
  if ('const' in s && !deepEqual(s.const, value)) add(`must be ${show(s.const)}`);

  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength)
      add(s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters (has ${length})`);
    if (typeof s.maxLength === 'number' && length > s.maxLength) add(`must be at most ${s.maxLength} characters (has ${length})`);
    if (typeof s.pattern === 'string') {
      let re;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {
        re = undefined; // a pattern this browser cannot read: the service checks it
      }
      if (re && !re.test(value)) add(`must match the pattern ${s.pattern}`);
    }
  }

  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) add(`must be at least ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) add(`must be at most ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) add(`must be more than ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) add(`must be less than ${s.exclusiveMaximum}`);
    if (s.exclusiveMinimum === true && typeof s.minimum === 'number' && value === s.minimum) add(`must be more than ${s.minimum}`);
    if (s.exclusiveMaximum === true && typeof s.maximum === 'number' && value === s.maximum) add(`must be less than ${s.maximum}`);
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && Math.abs(value / s.multipleOf - Math.round(value / s.multipleOf)) > 1e-9)
      add(`must be a multiple of ${s.multipleOf}`);
  }

  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) add(`needs at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) add(`takes at most ${s.maxItems} items (has ${value.length})`);
    if (s.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) add('must not repeat an item');
    // 2020-12 (prefixItems, then items) or draft-07 (items as a tuple, then additionalItems)
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    const rest = Array.isArray(s.prefixItems) ? s.items : Array.isArray(s.items) ? s.additionalItems : s.items;
    value.forEach((item, i) => {
      const sub = i < prefix.length ? prefix[i] : rest;
      if (sub !== undefined) errors.push(...validate(sub, item, rootSchema, childPath(path, i), depth + 1));
    });
  }

  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const props = s.properties || {};
    for (const name of Array.isArray(s.required) ? s.required : []) {
      if (value[name] === undefined) add('is required', childPath(path, name));
    }
    const keys = Object.keys(value);
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties) add(`needs at least ${s.minProperties} properties`);
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) add(`takes at most ${s.maxProperties} properties`);
    for (const key of keys) {
      if (value[key] === undefined) continue;
      if (Object.prototype.hasOwnProperty.call(props, key)) {
        errors.push(...validate(props[key], value[key], rootSchema, childPath(path, key), depth + 1));
      } else if (s.additionalProperties === false) {
        add(
          `is not a known argument${Object.keys(props).length ? ` (known: ${Object.keys(props).join(', ')})` : ''}`,
          childPath(path, key),
        );
      } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        errors.push(...validate(s.additionalProperties, value[key], rootSchema, childPath(path, key), depth + 1));
      }
    }
  }

  if (Array.isArray(s.allOf)) for (const sub of s.allOf) errors.push(...validate(sub, value, rootSchema, path, depth + 1));
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => validate(sub, value, rootSchema, path, depth + 1).length === 0))
    add('matches none of the allowed shapes (anyOf)');
  if (Array.isArray(s.oneOf)) {
    const matching = s.oneOf.filter((sub) => validate(sub, value, rootSchema, path, depth + 1).length === 0).length;
    if (matching !== 1)
      add(matching === 0 ? 'matches none of the allowed shapes (oneOf)' : 'matches more than one of the allowed shapes (oneOf)');
  }
  if (s.not !== undefined && validate(s.not, value, rootSchema, path, depth + 1).length === 0) add('has a shape that is not allowed (not)');
  return errors;
}
