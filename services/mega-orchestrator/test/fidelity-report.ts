/**
 * Prints how many of the conformance suite's required server scenarios a dual-era MCP server
 * (fixtures/dual-era-mcp-server.ts, the official v2 server SDK) passes directly and through a
 * gateway in front of it (over HTTP, and over stdio against the same server's HTTP results),
 * declared 2026-07-28 and left for the gateway to find, for clients of both eras; each scenario lost through the gateway is named with its failing checks.
 * `node --import tsx services/mega-orchestrator/test/fidelity-report.ts`
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { startDualEraServer } from './fixtures/dual-era-mcp-server';
import { dualEraFronts, ERAS, lostThroughGateway, requiredScenarioCounts, type ScenarioCounts } from './fidelity';
import { startGatewayWithMcpServer } from './helpers';

async function main(): Promise<void> {
  const tmp = tempDir('mcp-fleet-fidelity-report-');
  const server = await startDualEraServer();
  try {
    const direct = new Map<string, ScenarioCounts>();
    for (const era of ERAS) direct.set(era, await requiredScenarioCounts(server.url, era, tmp.dir));
    for (const { name, mcp } of dualEraFronts(server.url)) {
      const g = await startGatewayWithMcpServer('dual', mcp, path.join(tmp.dir, name.replace(/\W+/g, '-')), 'dual_echo');
      try {
        for (const era of ERAS) {
          const through = await requiredScenarioCounts(`${g.url}/mcp`, era, tmp.dir, direct.get(era)!.passed);
          const lost = lostThroughGateway(direct.get(era)!, through);
          process.stdout.write(
            `${era} client, server over ${name}: directly ${direct.get(era)!.passed.size}/${direct.get(era)!.total}, through the gateway ${through.passed.size}/${through.total}\n`,
          );
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
