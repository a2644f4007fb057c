/**
 * The build's command line (`./fleet build`, `./fleet setup`):
 *
 *   node --import tsx scripts/build/run.ts             # build every service and the launcher into dist/
 *   node --import tsx scripts/build/run.ts --if-stale  # only when something changed since the last build
 *   node --import tsx scripts/build/run.ts --check     # exit 1, saying why, when the build is stale
 */
import { buildOrExplain, ensureBuilt } from './build';
import { staleReason } from './stamp';

async function main() {
  const args = process.argv.slice(2);
  const log = (line: string) => process.stderr.write(`fleet: ${line}\n`);
  if (args.includes('--check')) {
    const reason = staleReason();
    if (reason) {
      log(`the build is stale: ${reason}; ./fleet build makes it again.`);
      process.exit(1);
    }
    log('the build is current.');
  } else if (args.includes('--if-stale')) await ensureBuilt(log);
  else await buildOrExplain(log);
}

main().catch((err) => {
  process.stderr.write(`fleet: ${(err as Error).message}\n`);
  process.exit(1);
});
