/**
 * marketplace-mcp: (1) the cost of JWT checking, POST /tools/skills_resolve and POST
 * /skills/v1/install-plan with JWT_SECRET unset and set (a security-mcp style HS256 token), both
 * measured in the same run against the service as its own process; (2) reproducible packing of a
 * 200-file skill by packSkill against GNU tar + gzip on the same files (the baseline).
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@mcp-fleet/testing/mail';
import { packSkill } from '../../services/marketplace-mcp/src/archive';
import { markdownTable, runLoad, startServiceProcess, stopProcesses, type LoadResult } from '../lib';

const SECRET = 'bench-marketplace-secret-0123456789abcdef';

async function timeIt(fn: () => unknown, rounds: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await fn();
  return Math.round(((performance.now() - t0) / rounds) * 100) / 100;
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-market-'));
  const loads: { auth: string; route: string; result: LoadResult }[] = [];
  // An HS256 token as security-mcp's jwt_token signs it (the bench has no jose of its own).
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ scope: 'market:read', sub: 'bench', iss: 'mcp-fleet', iat: now, exp: now + 3600 })}`;
  const token = `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
  const calls = [
    { route: 'POST /tools/skills_resolve', path: '/tools/skills_resolve', body: JSON.stringify({ name: 'commit-message', version: '^1' }) },
    {
      route: 'POST /skills/v1/install-plan',
      path: '/skills/v1/install-plan',
      body: JSON.stringify({ skills: ['commit-message@^1', 'sql-review', 'fleet-health-check'] }),
    },
  ];
  for (const auth of ['off', 'on'] as const) {
    const port = await freePort();
    const child = await startServiceProcess(
      'marketplace-mcp',
      { DATA_DIR: path.join(dataDir, auth), ...(auth === 'on' ? { JWT_SECRET: SECRET } : {}) },
      port,
    );
    try {
      for (const c of calls) {
        const result = await runLoad(
          `http://127.0.0.1:${port}`,
          { path: c.path, body: c.body, headers: auth === 'on' ? { authorization: `Bearer ${token}` } : {} },
          16,
          options.durationMs,
        );
        loads.push({ auth, route: c.route, result });
        process.stdout.write(
          `marketplace auth ${auth} ${c.route}: ${result.throughput} req/s p50 ${result.p50Ms} ms errors ${result.errors}\n`,
        );
      }
    } finally {
      await stopProcesses([child]);
    }
  }

  // Packing: 200 files of 2 KiB, packSkill (sorted, fixed metadata, gzip 9) vs tar czf of the same folder.
  const folder = path.join(dataDir, 'skill');
  fs.mkdirSync(path.join(folder, 'refs'), { recursive: true });
  const files = Array.from({ length: 200 }, (_, i) => ({
    path: `refs/file-${String(i).padStart(3, '0')}.md`,
    data: Buffer.from(`# ${i}\n${'lorem ipsum '.repeat(170)}`),
    executable: false,
  }));
  for (const f of files) fs.writeFileSync(path.join(folder, f.path), f.data);
  const rounds = 20;
  const oursMs = await timeIt(() => packSkill(files), rounds);
  const tarMs = await timeIt(() => spawnSync('tar', ['-czf', path.join(dataDir, 'x.tgz'), '-C', folder, '.']), rounds);
  const a = await packSkill(files);
  const b = await packSkill([...files].reverse());
  const reproducible = a.equals(b);
  fs.rmSync(dataDir, { recursive: true, force: true });

  const ratio = (route: string) => {
    const off = loads.find((l) => l.auth === 'off' && l.route === route)!.result.throughput;
    const on = loads.find((l) => l.auth === 'on' && l.route === route)!.result.throughput;
    return Math.round((on / off) * 100) / 100;
  };
  const markdown = [
    '### marketplace-mcp with JWT off and on (HS256 token checked with jose on every request; concurrency 16, same run)',
    '',
    markdownTable(
      ['route', 'auth', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
      loads.map((l) => [l.route, l.auth, l.result.throughput, l.result.p50Ms, l.result.p99Ms, l.result.errors]),
    ),
    '',
    `Throughput with JWT on / off: skills_resolve ${ratio(calls[0].route)}, install-plan ${ratio(calls[1].route)}.`,
    '',
    '### Packing a 200-file skill (2 KiB each), mean of 20',
    '',
    markdownTable(
      ['packer', 'ms', 'ratio to GNU tar'],
      [
        ['packSkill (sorted, fixed metadata, gzip 9, in process)', oursMs, Math.round((oursMs / tarMs) * 100) / 100],
        ['GNU tar -czf (baseline, a process)', tarMs, 1],
      ],
    ),
    '',
    `Same bytes from the files in reverse order: ${reproducible}.`,
  ].join('\n');
  return { json: { loads, packing: { oursMs, tarMs, reproducible } }, markdown };
}
