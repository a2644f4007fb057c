/**
 * Bounds on what one downstream may list (issue 33, item 4): at most so many tools, prompts and
 * resources, each with a description and a definition of bounded size. What is beyond them is
 * refused (not truncated: a cut description could change its meaning) and reported in GET /services
 * for that downstream. Items past the count cap are not even looked at, so the work a list costs is
 * bounded by the caps, not by what the server sends.
 */
import { createHash } from 'node:crypto';

export interface ListLimits {
  tools: number;
  prompts: number;
  /** Resources, and resource templates (each list on its own). */
  resources: number;
  /** Bytes of one item's description and title together. */
  descriptionBytes: number;
  /** Bytes of the rest of one item's definition (input and output schemas, annotations, arguments), as JSON. */
  schemaBytes: number;
}

export const LIST_LIMIT_DEFAULTS: Readonly<ListLimits> = {
  tools: 1000,
  prompts: 1000,
  resources: 1000,
  descriptionBytes: 8 * 1024,
  schemaBytes: 64 * 1024,
};

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** What a list lost to the limits, for /services. */
export interface ListRefusal {
  /** Items refused (at least this many when `more`). */
  refused: number;
  /** The server had more pages than were read (the count cap was reached first). */
  more?: boolean;
  /** Why, the first few (names only where they are plain names; never a description). */
  reasons: string[];
}

export interface BoundList {
  kept: Record<string, unknown>[];
  /** Changes when a kept item changes (the list need not be processed again when it does not). */
  signature: string;
  refusal?: ListRefusal;
}

const MAX_REASONS = 5;
const SHOWN_NAME = /^[\w.:/-]{1,64}$/;

/** An item's name as it may be shown in a reason: plain names only, so a server's text does not reach /services. */
const label = (item: Record<string, unknown>): string => {
  const name = item.name;
  return typeof name === 'string' && SHOWN_NAME.test(name) ? name : '(an item whose name is not shown)';
};

/**
 * The items of one list within the limits, in the server's order: the first `limits[kind]` of them
 * (the count cap of tools, prompts or resources) that are within the size caps. Anything that is
 * not an object is left out here (each list's reader says what else it needs).
 */
export function boundList(raw: readonly unknown[], kind: ListKind, limits: ListLimits, more = false): BoundList {
  const cap = kind === 'resourceTemplates' ? limits.resources : limits[kind];
  const kept: Record<string, unknown>[] = [];
  const reasons: string[] = [];
  const hash = createHash('sha1');
  let refused = 0;
  let i = 0;
  for (; i < raw.length && kept.length < cap; i++) {
    const item = raw[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const entry = item as Record<string, unknown>;
    const { description, title, ...rest } = entry;
    const text = (typeof description === 'string' ? description : '') + (typeof title === 'string' ? title : '');
    const textBytes = Buffer.byteLength(text);
    const json = JSON.stringify(rest);
    const restBytes = Buffer.byteLength(json);
    let problem: string | undefined;
    if (textBytes > limits.descriptionBytes)
      problem = `${label(entry)}: a description of ${textBytes} bytes (the cap is ${limits.descriptionBytes})`;
    else if (restBytes > limits.schemaBytes)
      problem = `${label(entry)}: a definition of ${restBytes} bytes beyond its description (the cap is ${limits.schemaBytes})`;
    if (problem) {
      refused += 1;
      if (reasons.length < MAX_REASONS) reasons.push(problem);
      continue;
    }
    kept.push(entry);
    hash.update(json).update('\u0000').update(text).update('\u0001');
  }
  const beyond = raw.length - i;
  if (beyond > 0 || more) {
    refused += beyond;
    reasons.unshift(`${beyond}${more ? ' or more' : ''} ${kind} beyond the cap of ${cap}`);
  }
  hash.update(String(kept.length));
  return {
    kept,
    signature: hash.digest('base64url'),
    ...(refused > 0 ? { refusal: { refused, ...(more ? { more } : {}), reasons } } : {}),
  };
}

/**
 * How long to leave a downstream's lists unread after they broke a count cap: a server that lists
 * 100,000 tools would otherwise cost that parse on every poll. Doubles from one minute to ten while
 * it stays over; a list within the caps resets it.
 */
export function listBackoffMs(previousMs: number): number {
  return previousMs > 0 ? Math.min(previousMs * 2, 600_000) : 60_000;
}
