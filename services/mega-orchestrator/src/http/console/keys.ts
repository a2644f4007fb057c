/**
 * The API keys of API_KEYS_FILE as the console manages them: listed (names and scopes, never hashes),
 * created (the key shown once, only its SHA-256 stored, as `pnpm gateway-key` does) and revoked.
 * Writes replace the file atomically (a temporary file renamed over it, mode 600) in the shape it
 * had (an array, or {"keys": [...]}), one at a time, and then the Authorizer reads it again, so a
 * new key works and a revoked one is refused from the next request on.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import { ADMIN_SCOPE, newApiKey, type Authorizer } from '../../auth/auth';

/** The scope that opens the console's admin pages and routes (keys, audit log, log tails): the gateway's one admin scope. */
export { ADMIN_SCOPE };

/** Every scope a key may carry: the tool scopes of auth.ts, and `admin`. */
export const SCOPE_PATTERN = /^(admin|tools:(read|write|all)|service:[a-z0-9][a-z0-9-]{0,62}(:read)?|server:[a-z0-9][a-z0-9-]{0,39})$/;

/** Names keys are given here: printable, no spaces (the owner key of a principal is built from it). */
export const KEY_NAME_PATTERN = /^[A-Za-z0-9][\w.@-]{0,99}$/;

export const newKeyBody = z
  .object({
    name: z.string().regex(KEY_NAME_PATTERN, 'name is 1-100 letters, digits, _ . @ or -, starting with a letter or digit'),
    scopes: z
      .array(
        z
          .string()
          .regex(
            SCOPE_PATTERN,
            'scopes are admin, tools:read, tools:write, tools:all, service:<id>, service:<id>:read or server:<virtual server>',
          ),
      )
      .min(1, 'give at least one scope')
      .max(100),
  })
  .strict();

interface StoredKey {
  name: string;
  hash: string;
  scopes: string[];
}

export interface KeyListing {
  name: string;
  scopes: string[];
  admin: boolean;
}

export class KeyStore {
  private writing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly file: string | undefined,
    private readonly auth: Authorizer | undefined,
  ) {}

  get configured(): boolean {
    return this.file !== undefined && this.auth !== undefined;
  }

  private need(): string {
    if (!this.file || !this.auth)
      throw new AppError('NOT_CONFIGURED', 'API keys are off: start the gateway with API_KEYS_FILE set to manage them here.');
    return this.file;
  }

  private async read(): Promise<{ keys: StoredKey[]; wrapped: boolean }> {
    const file = this.need();
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      throw new AppError('UPSTREAM_UNAVAILABLE', `API_KEYS_FILE could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`, {
        cause: err,
      });
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new AppError('INTERNAL', 'API_KEYS_FILE is not valid JSON; fix it by hand (pnpm gateway-key prints valid entries).', {
        cause: err,
      });
    }
    const wrapped = !Array.isArray(doc);
    const keys = (wrapped ? (doc as { keys?: unknown }).keys : doc) as StoredKey[] | undefined;
    if (!Array.isArray(keys)) throw new AppError('INTERNAL', 'API_KEYS_FILE holds neither an array nor {"keys": [...]}; fix it by hand.');
    return { keys, wrapped };
  }

  /** Replaces the file with these keys, then has the Authorizer read it (which checks it as at start). */
  private async write(keys: StoredKey[], wrapped: boolean): Promise<void> {
    const file = this.need();
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
    const text = `${JSON.stringify(wrapped ? { keys } : keys, null, 2)}\n`;
    try {
      await fs.writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw new AppError('UPSTREAM_UNAVAILABLE', `API_KEYS_FILE could not be written: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`, {
        cause: err,
      });
    }
    this.auth!.reloadKeys();
  }

  /** One change at a time: two creations never both read the file before either writes it. */
  private serial<T>(change: () => Promise<T>): Promise<T> {
    const run = this.writing.then(change);
    this.writing = run.catch(() => undefined);
    return run;
  }

  async list(): Promise<KeyListing[]> {
    const { keys } = await this.read();
    return keys.map((k) => ({ name: String(k.name), scopes: [...k.scopes], admin: k.scopes.includes(ADMIN_SCOPE) }));
  }

  /** A new key: returned once (the caller shows it), stored as its hash. */
  create(name: string, scopes: string[]): Promise<{ key: string; name: string; scopes: string[] }> {
    return this.serial(async () => {
      const { keys, wrapped } = await this.read();
      if (keys.some((k) => k.name === name))
        throw new AppError('CONFLICT', `A key named "${name}" exists already; pick another name, or revoke that key first.`);
      const unique = [...new Set(scopes)];
      const { key, entry } = newApiKey(name, unique);
      await this.write([...keys, entry], wrapped);
      return { key, name, scopes: unique };
    });
  }

  /** Removes the key of this name; the last admin key stays (nobody could manage keys here any more). */
  revoke(name: string): Promise<StoredKey> {
    return this.serial(async () => {
      const { keys, wrapped } = await this.read();
      const gone = keys.find((k) => k.name === name);
      if (!gone) throw new AppError('NOT_FOUND', `No key named "${name.slice(0, 100)}"; the list shows the keys there are.`);
      const rest = keys.filter((k) => k !== gone);
      if (gone.scopes.includes(ADMIN_SCOPE) && !rest.some((k) => k.scopes.includes(ADMIN_SCOPE)))
        throw new AppError(
          'CONFLICT',
          `"${name}" is the last key with the admin scope; create another admin key before revoking it, or edit API_KEYS_FILE by hand.`,
        );
      await this.write(rest, wrapped);
      return gone;
    });
  }
}
