/**
 * Prints how many of the conformance suite's required server scenarios a dual-era MCP server
 * (fixtures/dual-era-mcp-server.ts, the official v2 server SDK) passes directly and through a
 * gateway in front of it, declared 2026-07-28 and left for the gateway to find, for clients of
 * both eras; each scenario lost through the gateway is named with its failing checks.
 * `node --import tsx services/mega-orchestrator/test/fidelity-report.ts`
 */
import { tempDir } from '@mcp-fleet/testing';
import { startDualEraServer } from './fixtures/dual-era-mcp-server';
import { ERAS, lostThroughGateway, requiredScenarioCounts } from './fidelity';
import { startGatewayWithMcpServer } from './helpers';

async function main(): Promise<void> {
  const tmp = tempDir('mcp-fleet-fidelity-report-');
  const server = await startDualEraServer();
  try {
    for (const how of ['declared', 'found'] as const) {
      const mcp = {
        transport: 'streamable-http' as const,
        url: server.url,
        headers: {},
        ...(how === 'declared' ? { protocolVersion: '2026-07-28' as const } : {}),
      };
      const g = await startGatewayWithMcpServer('dual', mcp, `${tmp.dir}/${how}`, 'dual_echo');
      try {
        for (const era of ERAS) {
          const direct = await requiredScenarioCounts(server.url, era, tmp.dir);
          const through = await requiredScenarioCounts(`${g.url}/mcp`, era, tmp.dir);
          process.stdout.write(
            `${era} client, server ${how}: directly ${direct.passed.size}/${direct.total}, through the gateway ${through.passed.size}/${through.total}\n`,
          );
          const lost = lostThroughGateway(direct, through);
          if (Object.keys(lost).length) process.stdout.write(`  lost: ${JSON.stringify(lost, null, 1).slice(0, 6000)}\n`);
        }
      } finally {
        await g.stop();
      }
    }
  } finally {
    await server.stop();
    tmp.cleanup();
  }
}

void main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
