import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, KeyedSerial } from '@mcp-fleet/kit';
import { atomicWrite } from '@mcp-fleet/kit/workspace';
import { versionConflict, type SecretRecord, type SecretStore } from './types';

/**
 * The embedded secrets store: one file per service, `<dir>/<service>.enc.json`, mode 600, written
 * atomically. Each file is AES-256-GCM sealed with a key derived (HKDF-SHA256, a fresh salt per
 * write) from the store token; the service id and version are the associated data, so a file
 * copied over another service's, or rolled back under another version number, fails to open.
 * A per-service queue serialises writes, so two concurrent writes make two versions, not one.
 */
const FORMAT = 'secrets-ui-file/v1';
const HKDF_INFO = 'mcp-fleet secrets-ui file store v1';

interface SealedFile {
  format: string;
  service: string;
  version: number;
  updatedAt: string;
  salt: string;
  nonce: string;
  tag: string;
  data: string;
}

export class FileSecretStore implements SecretStore {
  readonly kind = 'file' as const;
  private readonly writes = new KeyedSerial();

  constructor(
    private readonly dir: string,
    private readonly tokenFile: string,
  ) {}

  location(service: string): string {
    return path.join(this.dir, `${service}.enc.json`);
  }

  private async secret(): Promise<Buffer> {
    const token = (await fs.readFile(this.tokenFile, 'utf8').catch(() => '')).trim();
    if (!token) {
      throw new AppError('NOT_CONFIGURED', `The store token file ${this.tokenFile} is missing or empty; put the token in it (mode 600).`);
    }
    return Buffer.from(token);
  }

  private aad(service: string, version: number, updatedAt: string): Buffer {
    return Buffer.from(`${FORMAT}\n${service}\n${version}\n${updatedAt}`);
  }

  async read(service: string): Promise<SecretRecord> {
    let text: string;
    try {
      text = await fs.readFile(this.location(service), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { values: {}, version: 0 };
      throw err;
    }
    const sealed = JSON.parse(text) as SealedFile;
    if (sealed.format !== FORMAT || sealed.service !== service) {
      throw new AppError('CONFLICT', `${this.location(service)} is not this store's file for ${service}; restore it from a backup.`);
    }
    const key = Buffer.from(hkdfSync('sha256', await this.secret(), Buffer.from(sealed.salt, 'base64'), HKDF_INFO, 32));
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.nonce, 'base64'));
    decipher.setAAD(this.aad(service, sealed.version, sealed.updatedAt));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
    } catch {
      throw new AppError(
        'CONFLICT',
        `${this.location(service)} does not open with the current store token (wrong token, or the file was altered).`,
      );
    }
    return { values: JSON.parse(plain.toString('utf8')) as Record<string, string>, version: sealed.version, updatedAt: sealed.updatedAt };
  }

  write(service: string, values: Record<string, string>, expectedVersion?: number): Promise<SecretRecord> {
    return this.writes.run(service, () => this.writeNow(service, values, expectedVersion));
  }

  private async writeNow(service: string, values: Record<string, string>, expectedVersion?: number): Promise<SecretRecord> {
    const current = await this.read(service);
    if (expectedVersion !== undefined && current.version !== expectedVersion)
      throw versionConflict(service, expectedVersion, current.version);
    const version = current.version + 1;
    const updatedAt = new Date().toISOString();
    const salt = randomBytes(16);
    const nonce = randomBytes(12);
    const key = Buffer.from(hkdfSync('sha256', await this.secret(), salt, HKDF_INFO, 32));
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(this.aad(service, version, updatedAt));
    const data = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
    const sealed: SealedFile = {
      format: FORMAT,
      service,
      version,
      updatedAt,
      salt: salt.toString('base64'),
      nonce: nonce.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await atomicWrite(this.location(service), JSON.stringify(sealed, null, 2) + '\n', { mode: 0o600 });
    return { values: { ...values }, version, updatedAt };
  }

  async ping(): Promise<unknown> {
    await this.secret();
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await fs.access(this.dir, fs.constants.W_OK);
    return { kind: this.kind, dir: this.dir };
  }

  async close(): Promise<void> {
    await this.writes.idle();
  }
}
