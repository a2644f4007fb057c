/**
 * The gateway accepts every request body a service of the fleet accepts: its BODY_LIMIT default is
 * at least each service's own (a file written through filesystem-mcp, base64 media or audio through
 * media-mcp and transcriber-mcp). With the gateway at 1mb, a 2 MB file_write that filesystem-mcp
 * takes directly was refused at the gateway with PAYLOAD_TOO_LARGE.
 */
import fs from 'node:fs';
import type { z } from 'zod';
import { SERVICES } from '@mcp-fleet/inventory';
import { byteLimit } from '@mcp-fleet/kit';
import { configSource } from '../../scripts/build/stamp';

/** Each service's BODY_LIMIT default, in bytes (services without a config schema of their own left out). */
function defaults(): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of SERVICES) {
    const file = configSource(entry.id);
    if (!file || !fs.existsSync(file)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { configSchema } = require(file) as { configSchema?: z.ZodObject };
    const limit = configSchema?.shape.BODY_LIMIT as z.ZodType<string> | undefined;
    if (limit) out.set(entry.id, byteLimit(limit.parse(undefined)));
  }
  return out;
}

describe('BODY_LIMIT defaults', () => {
  it("the gateway's is at least every service's own", () => {
    const all = defaults();
    const gateway = all.get('mega-orchestrator');
    expect(gateway).toBeDefined();
    expect(all.size).toBeGreaterThan(10);
    const over = [...all].filter(([, bytes]) => bytes > gateway!).map(([id]) => id);
    expect(over).toEqual([]);
    expect(gateway).toBe(Math.max(...all.values()));
  });
});
