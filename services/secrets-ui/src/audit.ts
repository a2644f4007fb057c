import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@mcp-fleet/kit';

export interface AuditEntry {
  at: string;
  actor: string;
  via: 'api' | 'ui';
  ip: string;
  action: 'reveal' | 'write' | 'login' | 'login-failed';
  service?: string;
  /** Names of the variables read or written; never a value. */
  keys?: string[];
  version?: number;
}

/**
 * Append-only audit trail: one JSON line per reveal, write and login in DATA_DIR/secrets-ui/audit.log
 * (mode 600), also written to the service log. Entries name keys, never values.
 */
export class AuditLog {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {}

  record(entry: Omit<AuditEntry, 'at'>): Promise<void> {
    const line: AuditEntry = { at: new Date().toISOString(), ...entry };
    this.logger.info('audit', { audit: line });
    const next = this.chain.then(async () => {
      await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      await fs.appendFile(this.file, JSON.stringify(line) + '\n', { mode: 0o600 });
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The newest entries first, at most `limit`. */
  async recent(limit: number): Promise<AuditEntry[]> {
    await this.chain;
    const text = await fs.readFile(this.file, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .slice(-limit)
      .reverse()
      .map((l) => JSON.parse(l) as AuditEntry);
  }
}
