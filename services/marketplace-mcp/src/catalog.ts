import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, decodeKeysetCursor, encodeKeysetCursor, type Logger } from '@mcp-fleet/kit';
import semver from 'semver';
import { packSkill, safeRelativePath, sha256, unpackSkill, type ArchiveLimits, type SkillFile } from './archive';
import { checkVersion, parseSkillArguments, parseSkillMd, SKILL_NAME, type FrontMatter, type SkillProblem } from './skill-format';

export interface SkillVersion {
  name: string;
  version: string;
  description: string;
  frontMatter: FrontMatter;
  /** The front matter exactly as its YAML reads (the Skills extension's entries carry it verbatim). */
  frontmatter: Record<string, unknown>;
  /** SKILL.md after its front matter: the instructions (what the skill's prompt carries). */
  body: string;
  files: { path: string; size: number; sha256: string; executable: boolean }[];
  /** Each file's bytes by its path: what resources/read serves, the very bytes `files` gives the digest of. */
  content: ReadonlyMap<string, Buffer>;
  archive: Buffer;
  sha256: string;
  size: number;
  source: 'catalog' | 'published';
  publishedAt: string;
  /** Where it was read from: the skill folder, or the stored archive of a published version. */
  origin: string;
  /**
   * Yanked (as Cargo yanks): ranges and "latest" no longer pick it, an exact pin still does and its
   * archive still downloads, so installs that locked it keep working.
   */
  yanked?: Yank;
}

export interface Yank {
  at: string;
  reason?: string;
}

export interface CatalogOptions extends ArchiveLimits {
  skillsDir: string;
  /** Published archives live here (<name>/<version>.tar.gz plus <version>.json). */
  storeDir: string;
  logger: Logger;
}

/** Versions newest first (semver order). */
const bySemverDesc = (a: string, b: string) => semver.rcompare(a, b);

/** Files under dir, refusing links and special files (a skill must be plain files). */
async function readSkillFolder(
  dir: string,
  rootLabel: string,
  limits: ArchiveLimits,
): Promise<{ files: SkillFile[]; problems: SkillProblem[] }> {
  const files: SkillFile[] = [];
  const problems: SkillProblem[] = [];
  let total = 0;
  const walk = async (abs: string, rel: string): Promise<void> => {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      const label = `${rootLabel}/${relPath}`;
      if (safeRelativePath(relPath) === undefined) {
        problems.push({ file: label, field: '(path)', message: 'file name is not a safe relative path' });
      } else if (e.isDirectory()) {
        await walk(path.join(abs, e.name), relPath);
      } else if (e.isFile()) {
        const st = await fs.stat(path.join(abs, e.name));
        total += st.size;
        if (files.length >= limits.maxFiles) {
          problems.push({ file: label, field: '(files)', message: `more than ${limits.maxFiles} files` });
          return;
        }
        if (total > limits.maxBytes) {
          problems.push({ file: label, field: '(size)', message: `the skill is larger than ${limits.maxBytes} bytes` });
          return;
        }
        files.push({ path: relPath, data: await fs.readFile(path.join(abs, e.name)), executable: (st.mode & 0o111) !== 0 });
      } else {
        problems.push({ file: label, field: '(type)', message: 'links and special files are not allowed in a skill' });
      }
    }
  };
  await walk(dir, '');
  return { files, problems };
}

/**
 * What the folders hold now, as one hash: every entry's path, type, mode, size, inode and times
 * (links are not followed). Any file written, added, removed or renamed changes it.
 */
async function diskFingerprint(dirs: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(abs, { withFileTypes: true });
    } catch (err) {
      hash.update(`${rel}\0unreadable:${(err as NodeJS.ErrnoException).code}\n`);
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = path.join(abs, e.name);
      const st = await fs.lstat(child, { bigint: true }).catch(() => undefined);
      if (!st) continue; // removed meanwhile: the next check sees the folder without it
      hash.update(`${rel}/${e.name}\0${st.mode}\0${st.size}\0${st.ino}\0${st.mtimeNs}\0${st.ctimeNs}\n`);
      if (st.isDirectory()) await walk(child, `${rel}/${e.name}`);
    }
  };
  for (const dir of dirs) await walk(dir, dir);
  return hash.digest('hex');
}

/** The skill catalog: the configured folder plus published versions, each packed once, reproducibly. */
export class SkillCatalog {
  private readonly skills = new Map<string, Map<string, SkillVersion>>();
  problems: SkillProblem[] = [];
  loadedAt = new Date().toISOString();
  private publishing: Promise<unknown> = Promise.resolve();
  /** The folders as the catalog last read them (diskFingerprint), and when they were last compared. */
  private readFingerprint?: string;
  private checkedAt = 0;
  private checking?: Promise<void>;

  constructor(private readonly options: CatalogOptions) {}

  static async open(options: CatalogOptions): Promise<SkillCatalog> {
    const catalog = new SkillCatalog(options);
    await catalog.reload();
    return catalog;
  }

  get skillsDir(): string {
    return this.options.skillsDir;
  }

  /** Reads the skills folder and the published store again (problems are replaced). */
  async reload(): Promise<void> {
    // taken first: a change made while the folders are read is seen by the next freshen()
    const fingerprint = await diskFingerprint([this.options.skillsDir, this.options.storeDir]);
    const skills = new Map<string, Map<string, SkillVersion>>();
    const problems: SkillProblem[] = [];
    const add = (v: SkillVersion) => {
      const versions = skills.get(v.name) ?? new Map<string, SkillVersion>();
      const existing = versions.get(v.version);
      if (existing && existing.sha256 !== v.sha256) {
        problems.push({
          file: v.origin,
          field: 'version',
          message: `${v.name}@${v.version} is also in ${existing.origin} with other content; kept that one`,
        });
        return;
      }
      versions.set(v.version, existing ?? v);
      skills.set(v.name, versions);
    };
    for (const v of await this.readFolder(problems)) add(v);
    for (const v of await this.readStore(problems)) add(v);
    for (const versions of skills.values()) for (const v of versions.values()) v.yanked = await this.readYank(v.name, v.version);
    this.skills.clear();
    for (const [k, v] of [...skills].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) this.skills.set(k, v);
    this.problems = problems;
    this.loadedAt = new Date().toISOString();
    this.readFingerprint = fingerprint;
    this.checkedAt = Date.now();
    this.options.logger.info('skill catalog loaded', { skills: skills.size, problems: problems.length, dir: this.options.skillsDir });
  }

  /** reload() in turn with publishing and yanking (none of them sees the catalog half read). */
  refresh(): Promise<void> {
    const run = this.publishing.then(() => this.reload());
    this.publishing = run.catch(() => undefined);
    return run;
  }

  /**
   * Reads the catalog again when the skills folder or the store changed on disk since it was read
   * (a file edited in place, added or removed; a stored archive replaced), comparing at most once
   * per `intervalMs` (0: every call). Concurrent callers share one comparison. What is served is
   * then the new bytes with their new digests; a stored archive that no longer matches its digest
   * is left out as at boot.
   */
  freshen(intervalMs: number): Promise<void> {
    if (this.checking) return this.checking;
    if (this.readFingerprint === undefined || Date.now() - this.checkedAt < intervalMs) return Promise.resolve();
    const run = (async () => {
      const now = await diskFingerprint([this.options.skillsDir, this.options.storeDir]);
      this.checkedAt = Date.now();
      if (now !== this.readFingerprint) {
        this.options.logger.info('skills folder changed on disk; reading the catalog again', { dir: this.options.skillsDir });
        // a file removed while it was read: what was served stays, the next comparison tries again
        await this.refresh().catch((err: unknown) =>
          this.options.logger.warn('the catalog could not be read again; serving it as it was', { err: (err as Error).message }),
        );
      }
    })();
    this.checking = run.finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async readFolder(problems: SkillProblem[]): Promise<SkillVersion[]> {
    const dir = this.options.skillsDir;
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      problems.push({
        file: dir,
        field: '(folder)',
        message: `cannot read the skills folder: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      });
      return [];
    }
    const out: SkillVersion[] = [];
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      const skillDir = path.join(dir, e.name);
      const hasSkillMd = await fs
        .lstat(path.join(skillDir, 'SKILL.md'))
        .then((s) => s.isFile())
        .catch(() => false);
      if (hasSkillMd) {
        const v = await this.readVersionFolder(skillDir, e.name, e.name, undefined, problems);
        if (v) out.push(v);
        continue;
      }
      // <name>/<version>/SKILL.md: several versions of one skill side by side.
      const subs = (await fs.readdir(skillDir, { withFileTypes: true })).filter((s) => s.isDirectory() && semver.valid(s.name) === s.name);
      if (subs.length === 0) {
        problems.push({
          file: `${e.name}/SKILL.md`,
          field: '(file)',
          message: 'missing: a skill folder needs SKILL.md (or <version>/SKILL.md folders)',
        });
      }
      for (const s of subs) {
        const v = await this.readVersionFolder(path.join(skillDir, s.name), `${e.name}/${s.name}`, e.name, s.name, problems);
        if (v) out.push(v);
      }
    }
    return out;
  }

  private async readVersionFolder(
    dir: string,
    label: string,
    name: string,
    folderVersion: string | undefined,
    problems: SkillProblem[],
  ): Promise<SkillVersion | undefined> {
    const read = await readSkillFolder(dir, label, this.options);
    const checked = await this.checkFiles(read.files, name, folderVersion, label);
    const all = [...read.problems, ...checked.problems];
    if (all.length || !checked.version) {
      problems.push(...all);
      return undefined;
    }
    return this.build(read.files, checked, checked.version, 'catalog', new Date().toISOString(), label);
  }

  /** Front matter, name and version checks of one version's files (folder or archive). */
  private async checkFiles(files: SkillFile[], name: string, version: string | undefined, label: string) {
    const file = `${label}/SKILL.md`;
    const skillMd = files.find((f) => f.path === 'SKILL.md');
    if (!skillMd) return { problems: [{ file, field: '(file)', message: 'missing: every skill needs SKILL.md at its top' }] };
    // served as text over MCP: its bytes must be the text's
    if (!isUtf8(skillMd.data)) return { problems: [{ file, field: '(file)', message: 'SKILL.md is not UTF-8 text' }] };
    const parsed = parseSkillMd(skillMd.data.toString('utf8'), file, name);
    if (!parsed.frontMatter) return { problems: parsed.problems };
    const declared = parsed.frontMatter.metadata?.version;
    const problems = [...parsed.problems];
    let resolved: string | undefined;
    if (version !== undefined) {
      resolved = version;
      if (declared !== undefined && declared !== version) {
        problems.push({ file, field: 'metadata.version', message: `"${declared}" differs from the version ${version} it is stored as` });
      }
    } else {
      const c = checkVersion(declared, file, 'metadata.version');
      if (c.problem) problems.push(c.problem);
      resolved = c.version;
    }
    problems.push(...parseSkillArguments(parsed.frontMatter.metadata?.arguments, file).problems);
    return {
      problems,
      frontMatter: parsed.frontMatter,
      frontmatterAsWritten: parsed.frontmatterAsWritten!,
      body: parsed.body,
      version: resolved,
    };
  }

  private async build(
    files: SkillFile[],
    { frontMatter, frontmatterAsWritten, body }: { frontMatter: FrontMatter; frontmatterAsWritten: Record<string, unknown>; body: string },
    version: string,
    source: SkillVersion['source'],
    publishedAt: string,
    origin: string,
  ): Promise<SkillVersion> {
    const archive = await packSkill(files);
    return {
      name: frontMatter.name,
      version,
      description: frontMatter.description,
      frontMatter,
      frontmatter: frontmatterAsWritten,
      body,
      files: files
        .map((f) => ({ path: f.path, size: f.data.length, sha256: sha256(f.data), executable: f.executable }))
        .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))),
      content: new Map(files.map((f) => [f.path, f.data])),
      archive,
      sha256: sha256(archive),
      size: archive.length,
      source,
      publishedAt,
      origin,
    };
  }

  private async readStore(problems: SkillProblem[]): Promise<SkillVersion[]> {
    const out: SkillVersion[] = [];
    const names = await fs.readdir(this.options.storeDir).catch(() => [] as string[]);
    for (const name of names.sort()) {
      if (!SKILL_NAME.test(name)) continue;
      const files = await fs.readdir(path.join(this.options.storeDir, name)).catch(() => [] as string[]);
      for (const f of files.filter((x) => x.endsWith('.tar.gz')).sort()) {
        const version = f.slice(0, -'.tar.gz'.length);
        const label = `published/${name}/${f}`;
        try {
          const archive = await fs.readFile(path.join(this.options.storeDir, name, f));
          const meta = JSON.parse(await fs.readFile(path.join(this.options.storeDir, name, `${version}.json`), 'utf8')) as {
            sha256?: string;
            publishedAt?: string;
          };
          if (meta.sha256 !== sha256(archive)) {
            problems.push({ file: label, field: 'sha256', message: 'the stored archive does not match its recorded digest; left out' });
            continue;
          }
          const v = await this.fromArchive(archive, name, version, label);
          if (v.problems.length || !v.version) {
            problems.push(...v.problems);
            continue;
          }
          out.push({ ...v.version, source: 'published', publishedAt: meta.publishedAt ?? new Date(0).toISOString() });
        } catch (err) {
          problems.push({ file: label, field: '(file)', message: `cannot read: ${(err as Error).message.slice(0, 200)}` });
        }
      }
    }
    return out;
  }

  private async fromArchive(archive: Buffer, name: string, version: string, label: string) {
    const files = await unpackSkill(archive, this.options);
    const checked = await this.checkFiles(files, name, version, label);
    if (checked.problems.length || !checked.frontMatter || !checked.version) return { problems: checked.problems };
    return {
      problems: [],
      version: await this.build(
        files,
        { frontMatter: checked.frontMatter, frontmatterAsWritten: checked.frontmatterAsWritten!, body: checked.body! },
        checked.version,
        'published',
        new Date().toISOString(),
        label,
      ),
    };
  }

  /** Adds a version from a tar.gz. Same bytes again: unchanged; other bytes for a published version: CONFLICT. */
  async publish(name: string, version: string, archive: Buffer): Promise<{ created: boolean; version: SkillVersion }> {
    if (!SKILL_NAME.test(name) || name.length > 64) {
      throw new AppError('VALIDATION_ERROR', `"${name.slice(0, 64)}" is not a skill name (lowercase letters, digits and hyphens).`, {
        details: [{ path: 'name', message: 'invalid skill name' }],
      });
    }
    if (semver.valid(version) !== version) {
      throw new AppError('VALIDATION_ERROR', `"${version.slice(0, 64)}" is not a semver version such as 1.2.3.`, {
        details: [{ path: 'version', message: 'not semver' }],
      });
    }
    const run = this.publishing.then(async () => {
      const label = `publish/${name}/${version}`;
      const built = await this.fromArchive(archive, name, version, label);
      if (!built.version) {
        throw new AppError(
          'VALIDATION_ERROR',
          `The skill is not valid: ${built.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
          {
            details: built.problems.map((p) => ({ path: `${p.file}#${p.field}`, message: p.message })),
          },
        );
      }
      const existing = this.skills.get(name)?.get(version);
      if (existing) {
        if (existing.sha256 === built.version.sha256) return { created: false, version: existing };
        throw new AppError(
          'CONFLICT',
          `${name}@${version} is already published with digest sha256:${existing.sha256}; published versions are immutable, publish a new version.`,
          { details: { sha256: existing.sha256 } },
        );
      }
      const v: SkillVersion = { ...built.version, publishedAt: new Date().toISOString(), origin: `published/${name}/${version}.tar.gz` };
      const dir = path.join(this.options.storeDir, name);
      await fs.mkdir(dir, { recursive: true });
      // Metadata first, then the archive by rename: a crash leaves no archive without its digest.
      await writeAtomic(
        path.join(dir, `${version}.json`),
        JSON.stringify({ name, version, sha256: v.sha256, size: v.size, publishedAt: v.publishedAt }),
      );
      await writeAtomic(path.join(dir, `${version}.tar.gz`), v.archive);
      const versions = this.skills.get(name) ?? new Map<string, SkillVersion>();
      versions.set(version, v);
      if (!this.skills.has(name)) {
        this.skills.set(name, versions);
        const sorted = [...this.skills].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        this.skills.clear();
        for (const [k, val] of sorted) this.skills.set(k, val);
      }
      return { created: true, version: v };
    });
    this.publishing = run.catch(() => undefined);
    return run;
  }

  /** Where a version's yank is recorded (for folder skills too: the store is the service's own data). */
  private yankFile(name: string, version: string): string {
    return path.join(this.options.storeDir, name, `${version}.yanked.json`);
  }

  private async readYank(name: string, version: string): Promise<Yank | undefined> {
    try {
      const v = JSON.parse(await fs.readFile(this.yankFile(name, version), 'utf8')) as { at?: unknown; reason?: unknown };
      return {
        at: typeof v.at === 'string' ? v.at : new Date(0).toISOString(),
        ...(typeof v.reason === 'string' ? { reason: v.reason } : {}),
      };
    } catch {
      return undefined;
    }
  }

  /**
   * Yanks a version (yanked: true) or takes the yank back (false), durably; the same state again
   * changes nothing. Serialised with publishing. NOT_FOUND for a version the catalog does not have.
   */
  async setYanked(name: string, version: string, yanked: boolean, reason?: string): Promise<{ changed: boolean; version: SkillVersion }> {
    const run = this.publishing.then(async () => {
      const v = this.skills.get(name)?.get(version);
      if (!v)
        throw new AppError(
          'NOT_FOUND',
          `${name.slice(0, 64)}@${version.slice(0, 64)} is not in the catalog; GET /skills/v1/index lists the versions.`,
        );
      if (yanked === (v.yanked !== undefined) && (!yanked || v.yanked?.reason === reason)) return { changed: false, version: v };
      if (yanked) {
        const mark: Yank = { at: new Date().toISOString(), ...(reason ? { reason } : {}) };
        await fs.mkdir(path.dirname(this.yankFile(name, version)), { recursive: true });
        await writeAtomic(this.yankFile(name, version), JSON.stringify({ name, version, ...mark }));
        v.yanked = mark;
      } else {
        await fs.rm(this.yankFile(name, version), { force: true });
        v.yanked = undefined;
      }
      this.options.logger.info(yanked ? 'skill version yanked' : 'skill version yank taken back', { name, version, reason });
      return { changed: true, version: v };
    });
    this.publishing = run.catch(() => undefined);
    return run;
  }

  names(): string[] {
    return [...this.skills.keys()];
  }

  versions(name: string): SkillVersion[] {
    const m = this.skills.get(name);
    return m ? [...m.values()].sort((a, b) => bySemverDesc(a.version, b.version)) : [];
  }

  /** The version a skill is served as by default (index, prompt, skill://<name>/): its latest release, else its newest prerelease. */
  head(name: string): SkillVersion | undefined {
    return this.latest(name) ?? this.versions(name)[0];
  }

  /** The highest version that is neither a prerelease nor yanked. */
  latest(name: string): SkillVersion | undefined {
    return this.versions(name).find((v) => semver.prerelease(v.version) === null && !v.yanked);
  }

  get(name: string, version: string): SkillVersion {
    const versions = this.skills.get(name);
    if (!versions) throw new AppError('NOT_FOUND', `No skill named "${name.slice(0, 64)}"; GET /skills/v1/index lists the catalog.`);
    const v = version === 'latest' ? this.latest(name) : versions.get(version);
    if (!v) {
      throw new AppError(
        'NOT_FOUND',
        `${name} has no version "${version.slice(0, 64)}"; it has ${this.versions(name)
          .map((x) => x.version)
          .join(', ')}.`,
      );
    }
    return v;
  }

  /**
   * The version a range picks: "latest" (or none) is the highest non-prerelease; ranges follow npm's
   * semver. Yanked versions are picked only by their exact version.
   */
  resolve(
    name: string,
    range = 'latest',
  ): { status: 'ok'; version: SkillVersion } | { status: 'unknown' } | { status: 'unsatisfiable'; available: string[] } {
    const versions = this.skills.get(name);
    if (!versions) return { status: 'unknown' };
    const all = this.versions(name);
    const pickable = all.filter((v) => !v.yanked).map((v) => v.version);
    const exact = semver.valid(range) === range ? versions.get(range) : undefined;
    const picked =
      exact ??
      (range === 'latest' || range === '' || range === '*' ? this.latest(name) : versions.get(semver.maxSatisfying(pickable, range) ?? ''));
    return picked ? { status: 'ok', version: picked } : { status: 'unsatisfiable', available: pickable };
  }

  /** Skills by name after the cursor: a keyset page, so publishing between pages neither repeats nor skips one. */
  page(opts: { limit: number; cursor?: string; search?: string }): { names: string[]; nextCursor?: string; total: number } {
    const after = decodeKeysetCursor(opts.cursor);
    const needle = opts.search?.toLowerCase();
    const matching = this.names().filter(
      (n) => !needle || n.includes(needle) || (this.latest(n) ?? this.versions(n)[0])?.description.toLowerCase().includes(needle),
    );
    const rest = after === undefined ? matching : matching.filter((n) => n > after);
    const names = rest.slice(0, opts.limit);
    return {
      names,
      total: matching.length,
      ...(rest.length > names.length ? { nextCursor: encodeKeysetCursor(names[names.length - 1]) } : {}),
    };
  }

  /** Re-reads every version's source and checks it still packs to its recorded digest. */
  async verify(only?: string): Promise<{ checked: number; mismatches: SkillProblem[] }> {
    const mismatches: SkillProblem[] = [];
    let checked = 0;
    for (const name of only ? [only] : this.names()) {
      for (const v of this.versions(name)) {
        checked++;
        try {
          const current =
            v.source === 'published'
              ? sha256(await fs.readFile(path.join(this.options.storeDir, name, `${v.version}.tar.gz`)))
              : sha256(await packSkill((await readSkillFolder(path.join(this.options.skillsDir, v.origin), v.origin, this.options)).files));
          if (current !== v.sha256) {
            mismatches.push({ file: v.origin, field: 'sha256', message: `now sha256:${current}, served as sha256:${v.sha256}` });
          }
        } catch (err) {
          mismatches.push({
            file: v.origin,
            field: '(file)',
            message: `cannot re-read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          });
        }
      }
    }
    return { checked, mismatches };
  }
}

async function writeAtomic(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, data, { mode: 0o644 });
  await fs.rename(tmp, file);
}
