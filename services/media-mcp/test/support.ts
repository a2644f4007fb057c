import type { OutboundPolicy } from '@mcp-fleet/outbound';
import request from 'supertest';
import { tempDir, testEnv, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

export type MediaApp = Awaited<ReturnType<typeof createApp>>;

/** A media-mcp app on a fresh workspace and data directory; `close()` removes both. */
export async function mediaApp(env: Record<string, string> = {}, policy?: OutboundPolicy, dirs?: { ws: string; data: string }) {
  const ws = dirs ? undefined : tempDir('media-ws-');
  const data = dirs ? undefined : tempDir('media-data-');
  const wsDir = dirs?.ws ?? ws!.dir;
  const dataDir = dirs?.data ?? data!.dir;
  const config = readConfig(testEnv({ WORKSPACE_ROOTS: wsDir, DATA_DIR: dataDir, TOOL_TIMEOUT_MS: '30000', BODY_LIMIT: '16mb', ...env }));
  const svc = await createApp({ config, logger: testLogger(), defaultMetrics: false, policy });
  return {
    svc,
    ws: wsDir,
    data: dataDir,
    call: (tool: string, args: Record<string, unknown>) => request(svc.app).post(`/tools/${tool}`).send(args),
    close: async (keep = false) => {
      await svc.close();
      if (!keep) {
        ws?.cleanup();
        data?.cleanup();
      }
    },
  };
}
