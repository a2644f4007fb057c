import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError } from '@mcp-fleet/kit';
import tar from 'tar-stream';

/** One file of a skill version, by its path inside the skill folder (forward slashes). */
export interface SkillFile {
  path: string;
  data: Buffer;
  executable: boolean;
}

export interface ArchiveLimits {
  maxBytes: number;
  maxFiles: number;
}

/** Fixed entry times (2000-01-01T00:00:00Z) and owners, so the same files always give the same bytes. */
const FIXED_MTIME = new Date('2000-01-01T00:00:00Z');

export const sha256 = (buf: Buffer): string => createHash('sha256').update(buf).digest('hex');

const hasControlChar = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** A relative path inside a skill: no absolute paths, `..`, empty or dot segments, backslashes, NUL or control characters. */
export function safeRelativePath(name: string): string | undefined {
  const p = name.replace(/^\.\//, '').replace(/\/+$/, '');
  if (p === '' || p.length > 512) return undefined;
  if (p.startsWith('/') || /^[a-zA-Z]:/.test(p) || p.includes('\\') || hasControlChar(p)) return undefined;
  if (p.split('/').some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return p;
}

/**
 * Packs files as a reproducible tar.gz: entries sorted by path (bytewise), regular files only,
 * mode 0644 (0755 when executable), fixed mtime, uid/gid 0 and no owner names; gzip level 9 with
 * no name and mtime 0 in its header (Node's zlib writes neither).
 */
export async function packSkill(files: readonly SkillFile[]): Promise<Buffer> {
  const pack = tar.pack();
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on('data', (c) => chunks.push(c as Buffer));
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const f of sorted) {
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        {
          name: f.path,
          size: f.data.length,
          mode: f.executable ? 0o755 : 0o644,
          mtime: FIXED_MTIME,
          uid: 0,
          gid: 0,
          uname: '',
          gname: '',
          type: 'file',
        },
        f.data,
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  }
  pack.finalize();
  await done;
  return zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
}

const refuse = (message: string, path = 'archive') => new AppError('VALIDATION_ERROR', message, { details: [{ path, message }] });

/**
 * Unpacks a tar.gz in memory, refusing what an installer must never write: absolute paths, `..`,
 * links, devices, FIFOs, duplicate paths, more than maxFiles files or more than maxBytes in all.
 * A single top-level folder (as `tar -C parent -czf x.tgz name` makes) is stripped.
 */
export async function unpackSkill(archive: Buffer, limits: ArchiveLimits): Promise<SkillFile[]> {
  if (archive.length > limits.maxBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', `The archive is ${archive.length} bytes; the limit is ${limits.maxBytes}.`);
  }
  let raw: Buffer;
  try {
    raw = zlib.gunzipSync(archive, { maxOutputLength: limits.maxBytes + 1024 * 1024 });
  } catch (err) {
    const tooBig = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger/.test(String(err));
    throw tooBig
      ? new AppError('PAYLOAD_TOO_LARGE', `The archive unpacks to more than ${limits.maxBytes} bytes.`)
      : refuse('The archive is not gzip data; send a .tar.gz.');
  }
  const extract = tar.extract();
  const files: SkillFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  // The first refusal wins; the rest of the archive is drained (bounded by the gunzip cap), never written.
  let failure: AppError | undefined;
  const result = new Promise<SkillFile[]>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const skip = (err?: AppError) => {
        failure ??= err;
        stream.on('end', () => next());
        stream.resume();
      };
      if (failure) return skip();
      const name = header.name;
      const rel = safeRelativePath(name);
      if (header.type === 'directory') {
        if (rel === undefined && name.replace(/\/+$/, '') !== '.')
          return skip(refuse(`Archive entry "${name.slice(0, 200)}" escapes the skill folder.`));
        return skip();
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        return skip(refuse(`Archive entry "${name.slice(0, 200)}" is a ${header.type}; only regular files and folders are allowed.`));
      }
      if (rel === undefined) return skip(refuse(`Archive entry "${name.slice(0, 200)}" escapes the skill folder (absolute path or "..").`));
      if (seen.has(rel)) return skip(refuse(`Archive entry "${rel}" appears twice.`));
      seen.add(rel);
      if (files.length >= limits.maxFiles) return skip(refuse(`The archive holds more than ${limits.maxFiles} files.`));
      const parts: Buffer[] = [];
      stream.on('data', (c) => {
        const chunk = c as Buffer;
        total += chunk.length;
        parts.push(chunk);
      });
      stream.on('end', () => {
        if (total > limits.maxBytes)
          failure ??= new AppError('PAYLOAD_TOO_LARGE', `The archive unpacks to more than ${limits.maxBytes} bytes.`);
        else files.push({ path: rel, data: Buffer.concat(parts), executable: ((header.mode ?? 0o644) & 0o111) !== 0 });
        next();
      });
    });
    extract.on('finish', () => (failure ? reject(failure) : resolve(files)));
    extract.on('error', (err) => reject(failure ?? refuse(`The archive is not a valid tar: ${err.message}`)));
  });
  Readable.from([raw]).pipe(extract);
  const out = await result;
  return stripSingleFolder(out);
}

function stripSingleFolder(files: SkillFile[]): SkillFile[] {
  if (files.some((f) => f.path === 'SKILL.md')) return files;
  const tops = new Set(files.map((f) => f.path.split('/')[0]));
  if (tops.size !== 1 || files.some((f) => !f.path.includes('/'))) return files;
  const [top] = tops;
  return files.map((f) => ({ ...f, path: f.path.slice(top.length + 1) }));
}
