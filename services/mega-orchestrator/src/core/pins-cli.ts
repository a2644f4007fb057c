/**
 * The operator's tool pins on the gateway's store (pins.ts), for a gateway without authorization
 * (whose admin routes refuse: anyone reaching it would be "the operator"), or any other:
 *
 *   node --import tsx services/mega-orchestrator/src/core/pins-cli.ts list
 *   node --import tsx services/mega-orchestrator/src/core/pins-cli.ts approve <server> <tool> [sha256:...]
 *
 * It reads the same variables as the gateway (DATA_DIR or SESSION_DB, or SESSION_DATABASE_URL) and
 * writes the store directly; a running gateway serves an approved tool again at its next poll.
 */
import path from 'node:path';
import { loadConfig, processEnv } from '@mcp-fleet/kit';
import { configSchema, SERVICE_ID } from './config';
import { openPostgresHistory, openSqliteHistory } from '../history/history-db';
import { PinApprovalError, PinStore } from './pins';

const USAGE = 'Usage: pins-cli.ts list | approve <server> <tool> [sha256:<hex>]';

async function main(argv: string[]): Promise<number> {
  const [command, server, tool, hash] = argv;
  if (command !== 'list' && command !== 'approve') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig(SERVICE_ID, configSchema, processEnv());
  const db = config.SESSION_DATABASE_URL
    ? await openPostgresHistory(config.SESSION_DATABASE_URL)
    : await openSqliteHistory(config.SESSION_DB ?? path.join(config.DATA_DIR, 'gateway', 'contexts.sqlite'));
  const store = new PinStore(async () => db);
  try {
    if (command === 'list') {
      for (const p of await store.all()) {
        const state = p.seen ? `CHANGED: lists ${p.seen.hash} since ${new Date(p.seen.at).toISOString()}` : 'as pinned';
        process.stdout.write(`${p.server} ${p.tool} ${p.hash} ${state}\n`);
        if (p.seen) process.stdout.write(`  pinned:    ${p.definition}\n  listed now: ${p.seen.definition}\n`);
      }
      return 0;
    }
    if (!server || !tool) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    const pin = await store.approve(server, tool, hash);
    process.stdout.write(`approved ${server} ${tool} ${pin.hash}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof PinApprovalError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: Error) => {
    process.stderr.write(`pins-cli: ${err.message}\n`);
    process.exitCode = 1;
  },
);
