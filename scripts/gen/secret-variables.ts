/**
 * Which environment variables of each service are secrets, derived from its zod config schema, for
 * the secrets UI (services/secrets-ui/src/secret-variables.generated.json). The rule:
 *   - a variable whose schema carries `.meta({ secret: true })` is a secret;
 *   - else one whose name matches the kit's redaction pattern (isSecretName: password, secret,
 *     token, api key, ...) is a secret, unless it carries `.meta({ secret: false })`;
 *   - a name ending in `_FILE` is never one (it names the file that holds a secret).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SERVICES } from '@mcp-fleet/inventory';
import { isSecretName } from '../../packages/kit/src/logger';
import { configSource } from '../build/stamp';

const ROOT = path.resolve(__dirname, '..', '..');
export const SECRET_VARIABLES_FILE = path.join(ROOT, 'services/secrets-ui/src/secret-variables.generated.json');

interface Prop {
  description?: string;
  secret?: boolean;
}

export function isSecretVariable(name: string, prop: Prop): boolean {
  if (name.endsWith('_FILE')) return false;
  if (prop.secret !== undefined) return prop.secret;
  return isSecretName(name);
}

export function secretVariables(): Record<string, { name: string; description: string }[]> {
  const out: Record<string, { name: string; description: string }[]> = {};
  for (const entry of SERVICES) {
    const file = configSource(entry.id, ROOT) ?? '';
    out[entry.id] = [];
    if (!fs.existsSync(file)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(file) as { configSchema?: z.ZodObject };
    if (!mod.configSchema) continue;
    const schema = z.toJSONSchema(mod.configSchema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, Prop> };
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      if (isSecretVariable(name, prop)) out[entry.id].push({ name, description: prop.description ?? '' });
    }
  }
  return out;
}

export function renderSecretVariables(): string {
  return JSON.stringify(secretVariables(), null, 2) + '\n';
}
