import { AppError } from '@mcp-fleet/kit';

/** One service's secrets as the store holds them: the current values and the version of the last write. */
export interface SecretRecord {
  values: Record<string, string>;
  /** 0 when nothing was ever written; every write adds one. */
  version: number;
  updatedAt?: string;
}

export interface SecretStore {
  /** "file" (encrypted file store under DATA_DIR) or "vault" (HashiCorp Vault KV v2). */
  readonly kind: 'file' | 'vault';
  /** Where one service's secrets live, for operators (a file path or a Vault path). */
  location(service: string): string;
  read(service: string): Promise<SecretRecord>;
  /**
   * Replaces the service's values with `values` as one new version. With expectedVersion, only if
   * the stored version is still that one (else CONFLICT, nothing written): a read-modify-write
   * cannot drop a change another writer made in between.
   */
  write(service: string, values: Record<string, string>, expectedVersion?: number): Promise<SecretRecord>;
  /** Throws when the store cannot be used now (health check). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

/** The CONFLICT of a write whose expected version is no longer the stored one. */
export const versionConflict = (service: string, expected: number, actual: number): AppError =>
  new AppError(
    'CONFLICT',
    `The secrets of ${service} changed meanwhile (version ${actual}, expected ${expected}); nothing was written. Read them again and retry.`,
    { details: { expectedVersion: expected, version: actual } },
  );
