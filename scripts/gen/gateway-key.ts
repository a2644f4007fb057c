/**
 * `pnpm gateway-key --name <name> --scopes tools:read[,service:git-mcp]`: a new API key for the
 * gateway. Prints the key once (give it to the client) and the entry to add to API_KEYS_FILE; only
 * the entry's SHA-256 hash is ever stored.
 */
import { parseArgs } from 'node:util';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { SCOPE_PATTERN } from '../../services/mega-orchestrator/src/http/console/keys';

const USAGE =
  'Usage: pnpm gateway-key --name NAME --scopes SCOPE[,SCOPE...]   (scopes: tools:read, tools:write, tools:all, service:<id>, service:<id>:read, admin = the console: keys, audit log, log tails)';

function main(): number {
  let values: { name?: string; scopes?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { name: { type: 'string' }, scopes: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    process.stderr.write(`gateway-key: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const scopes = (values.scopes ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !SCOPE_PATTERN.test(s));
  if (!values.name || !scopes.length || bad.length) {
    process.stderr.write(`gateway-key: ${bad.length ? `unknown scopes: ${bad.join(', ')}` : 'give --name and --scopes'}\n${USAGE}\n`);
    return 2;
  }
  const { key, entry } = newApiKey(values.name, scopes);
  process.stdout.write(
    `key (shown once; send it as "Authorization: Bearer <key>"):\n${key}\n\nadd to API_KEYS_FILE:\n${JSON.stringify(entry)}\n`,
  );
  return 0;
}

process.exitCode = main();
