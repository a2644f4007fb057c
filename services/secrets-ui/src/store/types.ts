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
  /** Replaces the service's values with `values` as one new version. */
  write(service: string, values: Record<string, string>): Promise<SecretRecord>;
  /** Throws when the store cannot be used now (health check). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}
