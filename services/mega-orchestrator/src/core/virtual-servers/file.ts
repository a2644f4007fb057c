/**
 * VIRTUAL_SERVERS_FILE: read at start (a bad file stops the start, naming the line), read again when
 * it changes (fs.watch on the file itself, followed to the new file when one is renamed over it, 100 ms
 * debounce, and a 2 s stat poll that sees a file appear and serves file systems without change
 * events); a bad file then is refused with the line named and the running definitions kept. The
 * admin API's writes go through here: one at a time, on the file as it is on disk, replaced
 * atomically (a temporary file renamed over it), and applied at once.
 *
 * Not a watch of its directory: that is DATA_DIR/gateway by default, where the call history's SQLite
 * file is written many times a second under load, and a directory watch woke the gateway's event
 * loop for each of those writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { atomicWrite } from '@mcp-fleet/kit/workspace';
import { parseDefinitions, withServer, type VirtualServerDef } from './definition';

export interface FileStatus {
  file: string;
  /** When the definitions in use were read. */
  loadedAt?: string;
  /** The last reading refused (the definitions in use are the ones before it), until a good one. */
  error?: { message: string; line?: number; at: string };
}

const DEBOUNCE_MS = 100;
const POLL_MS = 2000;

/** The file's text; a file that does not exist yet holds no servers. */
function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** Reads the file at start: its servers, or an Error naming the file and line (the gateway does not start). */
export function readDefinitionFile(file: string): { text: string; servers: Map<string, VirtualServerDef> } {
  const text = readText(file);
  const parsed = parseDefinitions(text, file);
  if (!parsed.ok) throw new Error(`VIRTUAL_SERVERS_FILE refused: ${parsed.error}`);
  return { text, servers: parsed.servers };
}

export class DefinitionFile {
  private text: string;
  private loadedAt = new Date().toISOString();
  private error?: FileStatus['error'];
  private watcher?: fs.FSWatcher;
  /** The inode the watcher follows: another one at the path means the file was replaced. */
  private watchedIno?: number;
  private timer?: NodeJS.Timeout;
  private writing: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly polled = () => this.soon();

  constructor(
    readonly file: string,
    initialText: string,
    private readonly apply: (servers: Map<string, VirtualServerDef>) => void,
    private readonly logger: Logger,
    private readonly pollMs = POLL_MS,
  ) {
    this.text = initialText;
  }

  /** Starts following the file's changes. */
  watch(): void {
    this.follow();
    fs.watchFile(this.file, { persistent: false, interval: this.pollMs }, this.polled);
  }

  /**
   * Watches the file now at the path, unless it is the one watched already: after an editor or
   * change() renamed a new file over it, the old watcher follows a file no longer there. No file, or
   * no change events for it: the poll follows it.
   */
  private follow(): void {
    if (this.closed) return;
    let ino: number | undefined;
    try {
      ino = fs.statSync(this.file).ino;
    } catch {
      ino = undefined;
    }
    if (this.watcher && ino === this.watchedIno) return;
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedIno = undefined;
    if (ino === undefined) return;
    try {
      const watcher = fs.watch(this.file, { persistent: false }, () => this.soon());
      watcher.on('error', () => {
        watcher.close();
        if (this.watcher === watcher) this.watcher = undefined;
      });
      this.watcher = watcher;
      this.watchedIno = ino;
    } catch (err) {
      this.logger.debug('VIRTUAL_SERVERS_FILE: no change events for it; polling it', { err: (err as Error).message });
    }
  }

  status(): FileStatus {
    return { file: this.file, loadedAt: this.loadedAt, ...(this.error ? { error: this.error } : {}) };
  }

  private soon(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () =>
        void this.serial(async () => {
          this.follow();
          this.reload();
        }),
      DEBOUNCE_MS,
    );
    this.timer.unref();
  }

  /**
   * Reads the file again; applies it when it changed and is good, else keeps what runs and says why.
   * A file that vanished is refused too (an editor between deleting and writing it must not take
   * every server away): an empty file removes them all.
   */
  reload(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'ENOENT' && this.text === '') return; // no file before either
      this.refuse(
        code === 'ENOENT'
          ? `${this.file} is gone; the servers defined before stay (an empty file removes them all)`
          : `${this.file}: cannot be read (${code})`,
      );
      return;
    }
    if (text === this.text && !this.error) return;
    const parsed = parseDefinitions(text, this.file);
    if (!parsed.ok) return this.refuse(parsed.error, parsed.line);
    this.accept(text, parsed.servers);
  }

  private accept(text: string, servers: Map<string, VirtualServerDef>): void {
    this.text = text;
    this.error = undefined;
    this.loadedAt = new Date().toISOString();
    this.apply(servers);
    this.logger.info('virtual servers loaded', { file: this.file, servers: [...servers.keys()] });
  }

  private refuse(message: string, line?: number): void {
    if (this.error?.message === message) return;
    this.error = { message, ...(line ? { line } : {}), at: new Date().toISOString() };
    this.logger.warn(`VIRTUAL_SERVERS_FILE refused; the virtual servers defined before it stay in use: ${message}`);
  }

  /**
   * Sets one server (or removes it: `def` undefined) in the file as it is on disk now, replaces the
   * file atomically and applies the result. A file that does not read as definitions is not
   * overwritten (CONFLICT, naming its line): someone is editing it.
   */
  change(name: string, def: VirtualServerDef | undefined): Promise<Map<string, VirtualServerDef>> {
    return this.serial(async () => {
      const current = readText(this.file);
      const before = parseDefinitions(current, this.file);
      if (!before.ok)
        throw new AppError(
          'CONFLICT',
          `The file does not read as virtual server definitions, so it is not overwritten: ${before.error}. Fix it first.`,
        );
      const text = withServer(current, this.file, name, def);
      const after = parseDefinitions(text, this.file);
      if (!after.ok) throw new AppError('INTERNAL', `The rewritten definitions do not read back: ${after.error}`);
      try {
        fs.mkdirSync(path.dirname(this.file), { recursive: true });
        // a new file is the operator's alone (fixed arguments may be worth keeping to themselves); an existing one keeps its mode
        await atomicWrite(this.file, text, fs.existsSync(this.file) ? {} : { mode: 0o600 });
      } catch (err) {
        throw new AppError(
          'UPSTREAM_UNAVAILABLE',
          `VIRTUAL_SERVERS_FILE could not be written: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`,
          {
            cause: err,
          },
        );
      }
      this.follow(); // the file renamed over the old one
      this.accept(text, after.servers);
      return after.servers;
    });
  }

  /** One reading or writing at a time. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writing.then(work);
    this.writing = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    fs.unwatchFile(this.file, this.polled);
  }
}
