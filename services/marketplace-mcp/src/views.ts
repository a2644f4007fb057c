import type { SkillCatalog, SkillVersion } from './catalog';

/** Where a version's archive is downloaded from. */
export const downloadPath = (name: string, version: string) =>
  `/skills/v1/packages/${encodeURIComponent(name)}/${encodeURIComponent(version)}/download`;

/** Subresource-integrity form of a hex sha256 (what npm's dist.integrity carries). */
export const integrityOf = (hex: string) => `sha256-${Buffer.from(hex, 'hex').toString('base64')}`;

/** One version's metadata, shaped like an npm packument version: dist carries the digest and URL. */
export function packageView(catalog: SkillCatalog, v: SkillVersion, baseUrl: string) {
  const fm = v.frontMatter;
  return {
    name: v.name,
    version: v.version,
    description: v.description,
    ...(fm.license ? { license: fm.license } : {}),
    ...(fm.compatibility ? { compatibility: fm.compatibility } : {}),
    ...(fm['allowed-tools'] ? { allowedTools: fm['allowed-tools'].split(/\s+/).filter(Boolean) } : {}),
    metadata: fm.metadata ?? {},
    latest: catalog.latest(v.name)?.version === v.version,
    source: v.source,
    publishedAt: v.publishedAt,
    // {at, reason?}: only an exact pin installs it; false otherwise
    yanked: v.yanked ?? false,
    dist: {
      tarball: `${baseUrl}${downloadPath(v.name, v.version)}`,
      sha256: v.sha256,
      integrity: integrityOf(v.sha256),
      size: v.size,
      fileCount: v.files.length,
    },
    files: v.files,
  };
}

/** One skill in the index: its latest version and every version's digest. */
export function indexItem(catalog: SkillCatalog, name: string, baseUrl: string) {
  const versions = catalog.versions(name);
  const latest = catalog.latest(name);
  const head = latest ?? versions[0];
  return {
    name,
    description: head.description,
    latest: latest?.version ?? null,
    versions: versions.map((v) => ({
      version: v.version,
      sha256: v.sha256,
      size: v.size,
      publishedAt: v.publishedAt,
      yanked: v.yanked !== undefined,
      tarball: `${baseUrl}${downloadPath(v.name, v.version)}`,
    })),
    updatedAt: versions
      .map((v) => v.publishedAt)
      .sort()
      .at(-1),
  };
}
