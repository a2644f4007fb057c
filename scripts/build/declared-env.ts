/**
 * Run by the build from its bundle (dist/fleet/declared-env.js): prints, as JSON, the variables each
 * service's built configuration schema declares, for the built launcher, which then need not load
 * every service's schema (and what it imports) to start each with only its own variables.
 */
import fs from 'node:fs';
import { schemaKeys } from '../fleet/service-env';
import { builtConfig, serviceIds } from './stamp';

const declared: Record<string, string[]> = {};
for (const id of serviceIds()) {
  const file = builtConfig(id);
  if (!fs.existsSync(file)) continue;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const keys = schemaKeys((require(file) as { configSchema?: Parameters<typeof schemaKeys>[0] }).configSchema);
  if (keys) declared[id] = keys;
}
process.stdout.write(JSON.stringify(declared));
