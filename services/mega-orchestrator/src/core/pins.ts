/**
 * Pinning (issue 33, item 6): the gateway records a hash of each third-party tool's definition the
 * first time it sees it (name, title, description, input and output schemas, annotations), in the
 * gateway's store (the call history's SQLite or PostgreSQL), so it outlives restarts and is shared by
 * instances. A later change of that definition (a "rug pull": a description turned into prompt
 * injection after clients listed it) is caught when the server's list changes, never on a call:
 *
 *   hold    (default for third-party MCP servers) the changed tool is withheld (not listed, calls
 *           refused) until an operator approves the new definition
 *   notify  the new definition is served, and the change reported until an operator approves it
 *   off     nothing recorded or checked
 *
 * An approval pins the definition the server lists now (POST /admin/pins/{server}/{tool}/approve, or
 * the pins CLI, which writes the store; every instance sees it at its next poll).
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@mcp-fleet/kit';
import type { HistoryDb } from '../history/history-db';

export { PIN_MODES, type PinMode } from '../downstream/mcp/spec';

/** The fields of a tool's definition a pin covers. */
export const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export interface Pin {
  server: string;
  tool: string;
  hash: string;
  /** The pinned definition (canonical JSON), for an operator comparing it with what is listed now. */
  definition: string;
  pinnedAt: number;
  /** Set when an operator approved this definition (not the first one seen). */
  approvedAt?: number;
}

/** A tool whose definition differs from its pin: withheld (hold) or served and reported (notify). */
export interface ChangedTool {
  tool: string;
  pinnedHash: string;
  hash: string;
  /** Which pinned fields differ. */
  changed: string[];
  since: number;
}

/** JSON with object keys sorted, so that a server reordering keys changes no hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The pinned part of a listed tool, its canonical JSON and its hash. */
export function definitionOf(raw: Record<string, unknown>): { definition: string; hash: string } {
  const picked: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS) if (raw[field] !== undefined) picked[field] = raw[field];
  const definition = canonicalJson(picked);
  return { definition, hash: `sha256:${createHash('sha256').update(definition).digest('hex')}` };
}

/** The pinned fields that differ between two canonical definitions. */
export function changedFields(pinned: string, current: string): string[] {
  let a: Record<string, unknown> = {};
  let b: Record<string, unknown> = {};
  try {
    a = JSON.parse(pinned) as Record<string, unknown>;
    b = JSON.parse(current) as Record<string, unknown>;
  } catch {
    return [...PINNED_FIELDS];
  }
  return PINNED_FIELDS.filter((f) => canonicalJson(a[f]) !== canonicalJson(b[f]));
}

const TABLE = `CREATE TABLE IF NOT EXISTS tool_pins (
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  hash TEXT NOT NULL,
  definition TEXT NOT NULL,
  pinned_at BIGINT NOT NULL,
  approved_at BIGINT,
  seen_hash TEXT,
  seen_definition TEXT,
  seen_at BIGINT,
  PRIMARY KEY (server, tool)
)`;

interface Row {
  server: string;
  tool: string;
  hash: string;
  definition: string;
  pinned_at: number;
  approved_at: number | null;
  seen_hash: string | null;
  seen_definition: string | null;
  seen_at: number | null;
}

/** A pin and, when the server lists another definition now, that one (awaiting approval). */
export interface PinRecord extends Pin {
  seen?: { hash: string; definition: string; at: number };
}

const toPin = (r: Row): PinRecord => ({
  server: String(r.server),
  tool: String(r.tool),
  hash: r.hash,
  definition: r.definition,
  pinnedAt: Number(r.pinned_at),
  ...(r.approved_at !== null && r.approved_at !== undefined ? { approvedAt: Number(r.approved_at) } : {}),
  ...(r.seen_hash ? { seen: { hash: r.seen_hash, definition: r.seen_definition ?? '', at: Number(r.seen_at) } } : {}),
});

/** Why an approval could not be made (the route's and the CLI's answer). */
export class PinApprovalError extends Error {
  constructor(
    readonly reason: 'unknown' | 'unchanged' | 'moved',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The pins, in the gateway's store (the table is created on first use). Without a store (it could
 * not be opened) pins live in memory only, and the log says so once.
 */
export class PinStore {
  private ready?: Promise<HistoryDb | undefined>;
  private readonly memory = new Map<string, Map<string, PinRecord>>();
  private warned = false;

  constructor(
    private readonly open: () => Promise<HistoryDb | undefined>,
    private readonly logger?: Logger,
  ) {}

  private db(): Promise<HistoryDb | undefined> {
    this.ready ??= this.open().then(async (db) => {
      if (!db) return undefined;
      try {
        await db.run(TABLE);
      } catch (err) {
        // two instances creating the table at once (PostgreSQL): the other one made it
        const there = await db.get('SELECT 1 FROM tool_pins LIMIT 1').then(
          () => true,
          () => false,
        );
        if (!there) throw err;
      }
      return db;
    });
    return this.ready;
  }

  private async store(): Promise<HistoryDb | undefined> {
    const db = await this.db().catch((err: Error) => {
      this.logger?.error(`tool pins cannot be stored: ${err.message}`);
      return undefined;
    });
    if (!db && !this.warned) {
      this.warned = true;
      this.logger?.warn('the session store is not open: tool pins are kept in memory only and start again after a restart');
    }
    return db;
  }

  private memoryOf(server: string): Map<string, PinRecord> {
    let pins = this.memory.get(server);
    if (!pins) this.memory.set(server, (pins = new Map()));
    return pins;
  }

  /** Every pin of a server (read from the store each time: another instance or the CLI may have approved one). */
  async list(server: string): Promise<Map<string, PinRecord>> {
    const db = await this.store();
    if (!db) return new Map(this.memory.get(server));
    const rows = await db.all<Row>('SELECT * FROM tool_pins WHERE server = ?', [server]);
    return new Map(rows.map((r) => [String(r.tool), toPin(r)]));
  }

  /** Every pin (for GET /admin/pins and the CLI). */
  async all(): Promise<PinRecord[]> {
    const db = await this.store();
    if (!db) return [...this.memory.values()].flatMap((m) => [...m.values()]);
    return (await db.all<Row>('SELECT * FROM tool_pins ORDER BY server, tool')).map(toPin);
  }

  /** Pins a definition seen for the first time; answers the pin that stands (another instance may have been first). */
  async first(server: string, tool: string, hash: string, definition: string): Promise<PinRecord> {
    const pin: PinRecord = { server, tool, hash, definition, pinnedAt: Date.now() };
    const db = await this.store();
    if (!db) {
      const pins = this.memoryOf(server);
      if (!pins.has(tool)) pins.set(tool, pin);
      return pins.get(tool)!;
    }
    await db.run(
      'INSERT INTO tool_pins (server, tool, hash, definition, pinned_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (server, tool) DO NOTHING',
      [server, tool, hash, definition, pin.pinnedAt],
    );
    const row = await db.get<Row>('SELECT * FROM tool_pins WHERE server = ? AND tool = ?', [server, tool]);
    return row ? toPin(row) : pin;
  }

  /** The server lists this definition now (another than its pin), or (undefined) the pinned one again. */
  async saw(server: string, tool: string, seen?: { hash: string; definition: string }): Promise<void> {
    const db = await this.store();
    if (!db) {
      const pin = this.memoryOf(server).get(tool);
      if (pin) pin.seen = seen ? { ...seen, at: pin.seen?.hash === seen.hash ? pin.seen.at : Date.now() } : undefined;
      return;
    }
    if (!seen) {
      await db.run('UPDATE tool_pins SET seen_hash = NULL, seen_definition = NULL, seen_at = NULL WHERE server = ? AND tool = ?', [
        server,
        tool,
      ]);
      return;
    }
    await db.run(
      'UPDATE tool_pins SET seen_hash = ?, seen_definition = ?, seen_at = ? WHERE server = ? AND tool = ? AND (seen_hash IS NULL OR seen_hash <> ?)',
      [seen.hash, seen.definition, Date.now(), server, tool, seen.hash],
    );
  }

  /**
   * An operator approves the definition the server lists now (the one `saw` recorded): it is the pin
   * from now on. `hash`, when given, must be that definition's (what the operator reviewed), so a
   * server that changed again meanwhile is not approved blind.
   */
  async approve(server: string, tool: string, hash?: string): Promise<PinRecord> {
    const current = (await this.list(server)).get(tool);
    if (!current) throw new PinApprovalError('unknown', `${server} has no pinned tool named ${tool}.`);
    if (!current.seen) throw new PinApprovalError('unchanged', `${server}'s ${tool} lists its pinned definition: nothing to approve.`);
    if (hash !== undefined && hash !== current.seen.hash)
      throw new PinApprovalError(
        'moved',
        `${server}'s ${tool} lists the definition ${current.seen.hash} now, not ${hash}: review it again (GET /admin/pins) and approve that one.`,
      );
    const now = Date.now();
    const approved: PinRecord = {
      server,
      tool,
      hash: current.seen.hash,
      definition: current.seen.definition,
      pinnedAt: now,
      approvedAt: now,
    };
    const db = await this.store();
    if (!db) {
      this.memoryOf(server).set(tool, approved);
      return approved;
    }
    await db.run(
      'UPDATE tool_pins SET hash = seen_hash, definition = seen_definition, pinned_at = ?, approved_at = ?, ' +
        'seen_hash = NULL, seen_definition = NULL, seen_at = NULL WHERE server = ? AND tool = ? AND seen_hash = ?',
      [now, now, server, tool, current.seen.hash],
    );
    const after = (await this.list(server)).get(tool);
    if (after?.hash !== current.seen.hash)
      throw new PinApprovalError('moved', `${server}'s ${tool} changed while it was being approved: review it again.`);
    return after;
  }
}
