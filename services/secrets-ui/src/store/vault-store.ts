import fs from 'node:fs/promises';
import { AppError } from '@mcp-fleet/kit';
import { versionConflict, type SecretRecord, type SecretStore } from './types';

export interface VaultStoreOptions {
  addr: string;
  tokenFile: string;
  mount: string;
  prefix: string;
  timeoutMs: number;
}

/**
 * HashiCorp Vault KV v2: one secret per service at <mount>/data/<prefix>/<service>; Vault keeps
 * the versions. The token is read from the mounted file on every request, so rotating the file
 * needs no restart. VAULT_ADDR is operator configuration, not caller input, so plain fetch is used.
 */
export class VaultSecretStore implements SecretStore {
  readonly kind = 'vault' as const;
  private readonly base: string;

  constructor(private readonly options: VaultStoreOptions) {
    this.base = options.addr.replace(/\/+$/, '');
  }

  location(service: string): string {
    return `${this.options.mount}/data/${this.options.prefix}/${service}`;
  }

  private async token(): Promise<string> {
    const token = (await fs.readFile(this.options.tokenFile, 'utf8').catch(() => '')).trim();
    if (!token) {
      throw new AppError(
        'NOT_CONFIGURED',
        `The Vault token file ${this.options.tokenFile} is missing or empty; mount the token there (compose.vault.yaml does).`,
      );
    }
    return token;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Vault's answers are read field by field, each one checked.
  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: any }> {
    let res: Response;
    try {
      res = await fetch(`${this.base}/v1/${path}`, {
        method,
        headers: { 'X-Vault-Token': await this.token(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      if (err instanceof AppError) throw err;
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new AppError(
        timedOut ? 'TIMEOUT' : 'UPSTREAM_UNAVAILABLE',
        timedOut
          ? `Vault at ${this.base} did not answer within ${this.options.timeoutMs} ms.`
          : `Vault at ${this.base} is not reachable; start it or fix VAULT_ADDR.`,
        { cause: err },
      );
    }
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: reported by status below
    }
    if (res.status === 403) {
      throw new AppError('UPSTREAM_ERROR', 'Vault refused the token (403); check the token file and its policy on this path.');
    }
    if (res.status === 503) throw new AppError('UPSTREAM_UNAVAILABLE', 'Vault is sealed or in standby (503); unseal it.');
    if (res.status >= 400 && res.status !== 404) {
      const errors = Array.isArray(json?.errors) ? json.errors.join('; ').slice(0, 300) : `HTTP ${res.status}`;
      throw new AppError('UPSTREAM_ERROR', `Vault answered ${res.status}: ${errors}`);
    }
    return { status: res.status, json };
  }

  async read(service: string): Promise<SecretRecord> {
    const { status, json } = await this.request('GET', this.location(service));
    const meta = json?.data?.metadata;
    if (status === 404) return { values: {}, version: typeof meta?.version === 'number' ? meta.version : 0 };
    const data = (json?.data?.data ?? {}) as Record<string, unknown>;
    const values = Object.fromEntries(Object.entries(data).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    return { values, version: Number(meta?.version ?? 0), updatedAt: meta?.created_time };
  }

  /** With expectedVersion, Vault's check-and-set (options.cas) makes the write conditional. */
  async write(service: string, values: Record<string, string>, expectedVersion?: number): Promise<SecretRecord> {
    const body = expectedVersion === undefined ? { data: values } : { options: { cas: expectedVersion }, data: values };
    try {
      const { json } = await this.request('POST', this.location(service), body);
      return { values: { ...values }, version: Number(json?.data?.version ?? 0), updatedAt: json?.data?.created_time };
    } catch (err) {
      if (expectedVersion !== undefined && err instanceof AppError && /check-and-set/i.test(err.message)) {
        throw versionConflict(service, expectedVersion, (await this.read(service)).version);
      }
      throw err;
    }
  }

  async ping(): Promise<unknown> {
    const { json } = await this.request('GET', 'auth/token/lookup-self');
    return { kind: this.kind, addr: this.base, tokenTtl: json?.data?.ttl };
  }

  async close(): Promise<void> {}
}
