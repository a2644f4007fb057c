import { isSecretName, REDACTED, scrubUrlCredentials } from '@mcp-fleet/kit';

export { REDACTED };

/** Deeper structures are replaced rather than walked, so redaction can never be skipped by nesting. */
const MAX_DEPTH = 64;
const MAX_REPORTED_PATHS = 200;

export interface SecretPolicy {
  /** True when a variable or key name looks secret (kit isSecretName plus ENV_SECRET_PATTERNS). */
  isSecret(name: string): boolean;
}

export function createSecretPolicy(extraPatterns: string[]): SecretPolicy {
  const extra = extraPatterns.map((p) => new RegExp(p, 'i'));
  return { isSecret: (name) => isSecretName(name) || extra.some((re) => re.test(name)) };
}

export { scrubUrlCredentials };

/** JSON pointer segment escaping (RFC 6901). */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

export interface RedactionResult {
  data: unknown;
  /** JSON pointers of the values that were replaced (first 200). */
  redactedPaths: string[];
  redactedCount: number;
}

/** Copies parsed config data, replacing values under secret-looking keys and credentials inside URLs. */
export function redactData(value: unknown, policy: SecretPolicy): RedactionResult {
  const redactedPaths: string[] = [];
  let redactedCount = 0;
  const note = (pointer: string) => {
    redactedCount++;
    if (redactedPaths.length < MAX_REPORTED_PATHS) redactedPaths.push(pointer);
  };
  const walk = (v: unknown, pointer: string, depth: number): unknown => {
    if (typeof v === 'string') {
      const scrubbed = scrubUrlCredentials(v);
      if (scrubbed !== v) note(pointer);
      return scrubbed;
    }
    if (v === null || typeof v !== 'object' || v instanceof Date) return v;
    if (depth >= MAX_DEPTH) {
      note(pointer);
      return '[redacted: nested too deeply]';
    }
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${pointer}/${i}`, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const childPointer = `${pointer}/${pointerSegment(k)}`;
      if (
        policy.isSecret(k) &&
        child !== null &&
        child !== undefined &&
        child !== '' &&
        (typeof child !== 'object' || Object.keys(child).length > 0)
      ) {
        note(childPointer);
        out[k] = REDACTED;
      } else {
        out[k] = walk(child, childPointer, depth + 1);
      }
    }
    return out;
  };
  const data = walk(value, '', 0);
  return { data, redactedPaths, redactedCount };
}
