import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Connection strings of the real engines the tests use (the machine's running servers by default). */
export const BACKENDS = {
  postgres: { env: 'TEST_DATABASE_URL', url: 'postgres://postgres@127.0.0.1:5432/test' },
  redis: { env: 'TEST_REDIS_URL', url: 'redis://127.0.0.1:6379' },
  mqtt: { env: 'TEST_MQTT_URL', url: 'mqtt://127.0.0.1:1883' },
  mariadb: { env: 'TEST_MARIADB_URL', url: 'mysql://root@127.0.0.1:3306/test' },
  imap: { env: 'TEST_IMAP_URL', url: 'imap://127.0.0.1:143' },
  smtp: { env: 'TEST_SMTP_URL', url: 'smtp://127.0.0.1:25' },
} as const;

export type BackendName = keyof typeof BACKENDS;

export const requireBackends = (): boolean => process.env.REQUIRE_BACKENDS === '1';

export function backendUrl(name: BackendName): string {
  return process.env[BACKENDS[name].env] ?? BACKENDS[name].url;
}

const reachable = new Map<string, boolean>();

/** Synchronous TCP probe, so it can decide between describe and describe.skip at collection time. */
export function backendReachable(name: BackendName): boolean {
  const url = new URL(backendUrl(name));
  const key = `${url.hostname}:${url.port}`;
  const cached = reachable.get(key);
  if (cached !== undefined) return cached;
  const script = `const s=require('net').connect(${Number(url.port)},${JSON.stringify(url.hostname.replace(/^\[|\]$/g, ''))});s.setTimeout(1500);s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  const ok = spawnSync(process.execPath, ['-e', script], { timeout: 3000 }).status === 0;
  reachable.set(key, ok);
  return ok;
}

/**
 * describe() that needs a real engine. Unreachable engine: skipped locally, a failing test under
 * REQUIRE_BACKENDS=1 (CI), never a silent pass.
 */
export function describeWithBackend(name: BackendName, title: string, fn: () => void): void {
  if (backendReachable(name)) {
    describe(`${title} [${name}]`, fn);
  } else if (requireBackends()) {
    describe(`${title} [${name}]`, () => {
      it(`needs ${name} at ${backendUrl(name)} (REQUIRE_BACKENDS=1)`, () => {
        throw new Error(`${name} is not reachable at ${backendUrl(name)}; start it (see .ci/run) or unset REQUIRE_BACKENDS.`);
      });
    });
  } else {
    describe.skip(`${title} [${name} not reachable at ${backendUrl(name)}]`, fn);
  }
}

export {
  abortSignalReads,
  countsAdded,
  requestCounts,
  serve,
  tempDir,
  testConfig,
  testEnv,
  testLogger,
  unmatchedAs,
} from '@mcp-fleet/kit/test-support';
export * from './tools';
export * from './support';
export * from './media';
export * from './pg-roles';

export interface PgScratchSchema {
  /** The schema's name (a random, safe identifier). */
  schema: string;
  /** A client on the real server, search_path set to the schema. */
  admin: Client;
  /** The server's URL with `-c search_path=<schema>`, for the code under test. */
  url: string;
  /** Drops the schema with everything in it and closes the client. */
  drop(): Promise<void>;
}

/** A fresh schema on the real PostgreSQL (backendUrl('postgres')), for one test file. */
export async function pgScratchSchema(prefix: string): Promise<PgScratchSchema> {
  const base = backendUrl('postgres');
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`SET search_path = ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    schema,
    admin,
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** True when `program` is on the PATH (or, for an absolute path, exists). */
export function programAvailable(program: string): boolean {
  if (path.isAbsolute(program)) return fs.existsSync(program);
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, program)));
}

/**
 * describe() that needs a program from a Debian package (ffmpeg, dovecot, prometheus, chromium...).
 * Missing program: skipped locally, a failing test under REQUIRE_BACKENDS=1 (CI), never a silent pass.
 * `scripts/ci/ensure-backends.sh` installs them.
 */
export function describeWithProgram(program: string, debianPackage: string, title: string, fn: () => void): void {
  if (programAvailable(program)) {
    describe(`${title} [${program}]`, fn);
  } else if (requireBackends()) {
    describe(`${title} [${program}]`, () => {
      it(`needs ${program} (REQUIRE_BACKENDS=1)`, () => {
        throw new Error(
          `${program} is not installed; apt-get install ${debianPackage} (scripts/ci/ensure-backends.sh does) or unset REQUIRE_BACKENDS.`,
        );
      });
    });
  } else {
    describe.skip(`${title} [${program} not installed: apt-get install ${debianPackage}]`, fn);
  }
}

/** A free TCP port on 127.0.0.1 (bound and released; the small race is acceptable in tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
