import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, renderEnvFile, type KeyedSerial } from '@mcp-fleet/kit';
import { atomicWrite } from '@mcp-fleet/kit/workspace';
import { z } from 'zod';
import { findService, type ServiceSecrets } from './catalog';
import type { SecretRecord, SecretStore } from './store';

export const MASK = '••••••••';

export const writeBody = z
  .object({
    values: z
      .record(z.string().min(1).max(128), z.string().nullable())
      .describe('Variables to set (string) or remove (null); variables not named keep their value.'),
  })
  .strict();

export const revealBody = z.object({ key: z.string().min(1).max(128).describe('The one variable to reveal.') }).strict();

export interface SecretsDeps {
  store: SecretStore;
  catalog: ServiceSecrets[];
  exportDir: string;
  restartCommand: string;
  maxValueBytes: number;
  /** One write per service at a time: read, change, store and export are one step. */
  writes: KeyedSerial;
}

export function restartHint(deps: SecretsDeps, service: string) {
  return {
    required: true,
    services: [service],
    command: deps.restartCommand.replace(/\{services?\}/g, service),
    note: `${service} reads its environment at start; with the launcher, stop it (Ctrl-C) and run ./fleet up again.`,
  };
}

/**
 * `<export dir>/<service>.env`, or `<export dir>/<service>/<service>.env` when that folder is there: compose
 * mounts each service's own export volume on it (docs/deployment.md, "Compose"), which the service reads as
 * its `/data/secrets-ui/env/<service>.env`.
 */
export function exportFileOf(deps: SecretsDeps, service: string): string {
  const own = path.join(deps.exportDir, service);
  const folder = statSync(own, { throwIfNoEntry: false })?.isDirectory();
  return path.join(folder ? own : deps.exportDir, `${service}.env`);
}

/** One service's secrets with every value masked. */
export function maskedView(deps: SecretsDeps, svc: ServiceSecrets, record: SecretRecord) {
  const known = new Set(svc.variables.map((v) => v.name));
  const keys = svc.variables.map((v) => ({
    name: v.name,
    description: v.description,
    set: v.name in record.values,
    value: v.name in record.values ? MASK : null,
  }));
  // Values stored under names the service no longer reads: shown so they can be removed.
  for (const name of Object.keys(record.values))
    if (!known.has(name)) keys.push({ name, description: '(no longer read by the service; remove it)', set: true, value: MASK });
  return {
    service: svc.id,
    version: record.version,
    updatedAt: record.updatedAt ?? null,
    store: { kind: deps.store.kind, path: deps.store.location(svc.id) },
    exportFile: exportFileOf(deps, svc.id),
    keys,
  };
}

export async function reveal(deps: SecretsDeps, serviceId: string, key: string) {
  const svc = findService(deps.catalog, serviceId);
  const record = await deps.store.read(svc.id);
  if (!(key in record.values)) {
    const valid = svc.variables.map((v) => v.name);
    if (!valid.includes(key)) throw unknownKeys(svc, [key]);
    throw new AppError('NOT_FOUND', `${key} of ${svc.id} has no value in the store yet; set it first.`);
  }
  return { service: svc.id, key, value: record.values[key], version: record.version };
}

function unknownKeys(svc: ServiceSecrets, keys: string[]): AppError {
  const valid = svc.variables.map((v) => v.name);
  return new AppError(
    'VALIDATION_ERROR',
    `${svc.id} does not read ${keys.join(', ')}; ${valid.length ? `its secret variables are ${valid.join(', ')}` : 'it reads no secret variables'}.`,
    { details: keys.map((k) => ({ path: `values.${k}`, message: 'not a secret variable of this service', valid })) },
  );
}

/**
 * Validates, writes one new version, regenerates the export file, and says what must restart.
 * Sets and removes some of a service's variables, keeping the others: one write at a time per
 * service in this process, and conditional on the version read (another instance or a direct
 * change to the store in between answers CONFLICT instead of being overwritten). The export file
 * is rewritten in the same step, so it always holds the newest version.
 */
export async function writeSecrets(deps: SecretsDeps, serviceId: string, values: Record<string, string | null>) {
  const svc = findService(deps.catalog, serviceId);
  return deps.writes.run(svc.id, () => writeNow(deps, svc, values));
}

async function writeNow(deps: SecretsDeps, svc: ServiceSecrets, values: Record<string, string | null>) {
  const record = await deps.store.read(svc.id);
  const valid = new Set(svc.variables.map((v) => v.name));
  const names = Object.keys(values);
  if (names.length === 0) throw new AppError('VALIDATION_ERROR', 'values is empty; name at least one variable to set or remove.');
  // Removing a stale name (stored but no longer read) is allowed; setting one is not.
  const bad = names.filter((k) => !valid.has(k) && !(values[k] === null && k in record.values));
  if (bad.length) throw unknownKeys(svc, bad);
  const problems: { path: string; message: string }[] = [];
  for (const [k, v] of Object.entries(values)) {
    if (v === null) continue;
    if (Buffer.byteLength(v) > deps.maxValueBytes)
      problems.push({ path: `values.${k}`, message: `longer than ${deps.maxValueBytes} bytes` });
    if (v.includes('\0')) problems.push({ path: `values.${k}`, message: 'contains a NUL byte, which no environment variable can hold' });
  }
  if (problems.length) {
    const tooLong = problems.some((p) => p.message.startsWith('longer'));
    throw new AppError(
      tooLong ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR',
      `Refused: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}.`,
      {
        details: problems,
      },
    );
  }
  const next = { ...record.values };
  for (const [k, v] of Object.entries(values)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  const written = await deps.store.write(svc.id, next, record.version);
  const exportFile = await writeExportFile(deps, svc.id, written);
  return {
    service: svc.id,
    version: written.version,
    updatedAt: written.updatedAt ?? null,
    set: names.filter((k) => values[k] !== null),
    removed: names.filter((k) => values[k] === null),
    exportFile,
    restart: restartHint(deps, svc.id),
  };
}

export async function writeExportFile(deps: SecretsDeps, service: string, record: SecretRecord): Promise<string> {
  const file = exportFileOf(deps, service);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const text = renderEnvFile(record.values, [
    `Runtime secrets of ${service}, version ${record.version}; written by secrets-ui, do not edit by hand.`,
    `Load with: set -a; . ${file}; set +a`,
  ]);
  await atomicWrite(file, text, { mode: 0o600 });
  return file;
}
