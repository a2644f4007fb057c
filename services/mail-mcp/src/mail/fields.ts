import { z } from 'zod';

/** CR or LF in a header value would let a caller add headers of their own (header injection). */
const NO_LINE_BREAKS = /^[^\r\n\0]*$/;

export const headerText = (max: number) =>
  z.string().max(max).regex(NO_LINE_BREAKS, 'must not contain CR, LF or NUL (they would start a new header line)');

const EMAIL = z.regexes.unicodeEmail;
const NAMED = /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>]+)>\s*$/;

export interface Address {
  name?: string;
  address: string;
}

/** "Name <a@b.example>", "a@b.example" or {name, address}; refused unless the address is one. */
export const addressSchema = z
  .union([
    headerText(998),
    z
      .object({
        name: headerText(256).optional().describe('Display name.'),
        address: headerText(320).describe('The address, local@domain.'),
      })
      .strict(),
  ])
  .transform((v, ctx): Address => {
    let name: string | undefined;
    let address: string;
    if (typeof v === 'string') {
      const m = NAMED.exec(v);
      name = m?.[1]?.trim() || undefined;
      address = (m ? m[2] : v).trim();
    } else {
      name = v.name?.trim() || undefined;
      address = v.address.trim();
    }
    if (address.length > 320 || !EMAIL.test(address)) {
      ctx.addIssue({ code: 'custom', message: `"${address.slice(0, 100)}" is not a valid email address` });
      return z.NEVER;
    }
    return name ? { name, address } : { address };
  });

export const addressListSchema = (what: string) =>
  z
    .union([addressSchema, z.array(addressSchema).max(100)])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .describe(`${what}: one address or a list of at most 100 ("Name <a@b.example>", "a@b.example" or {name, address}).`);

/** A Message-ID as it appears in In-Reply-To and References; the angle brackets are added when missing. */
export const messageIdSchema = headerText(998)
  .transform((v) => v.trim())
  .refine((v) => /^<?[^\s<>]+@?[^\s<>]*>?$/.test(v), 'a Message-ID such as <abc@example.com>')
  .transform((v) => (v.startsWith('<') ? v : `<${v}>`));

/** IMAP mailbox names: no control characters and no LIST wildcards. */
export const folderSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\r\n\0*%]+$/, 'a folder name without CR, LF, NUL, * or %')
  .refine((v) => v.trim() === v && !/^[/.]|[/.]$/.test(v), 'no leading or trailing spaces, "/" or "."');

/** RFC 9051 flag-keyword: an atom (no specials, no "\") of printable ASCII; system flags start with "\". */
export const SYSTEM_FLAGS = ['\\Seen', '\\Flagged', '\\Answered', '\\Draft'] as const;
export const KEYWORD = /^[!#$&'+,\-./0-9:<=>?@A-Z^_`a-z|~]{1,128}$/;

export const labelSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\r\n\0*%]+$/, 'a label without CR, LF, NUL, * or %')
  .describe(
    'A label: an existing folder name, a keyword (letters, digits, $ _ - . and the like) or a system flag (\\Seen, \\Flagged, \\Answered, \\Draft).',
  );

export function formatAddress(a: Address): string {
  return a.name ? `"${a.name.replace(/["\\]/g, '\\$&')}" <${a.address}>` : a.address;
}
