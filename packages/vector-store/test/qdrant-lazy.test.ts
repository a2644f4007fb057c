/**
 * Qdrant's client (and undici under it) is loaded by the first QdrantVectorStore, not by the
 * package: a process on the embedded store never holds it. The store made after the lazy load
 * still maps the client's errors (here a real refused connection) to the fleet's codes.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { freePort } from '@mcp-fleet/testing';

const script = `
const loaded = () => Object.keys(require.cache).some((f) => f.includes('/node_modules/@qdrant/js-client-rest/'));
const { EmbeddedVectorStore, QdrantVectorStore } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
const out = { atImport: loaded(), embedded: typeof EmbeddedVectorStore };
const store = new QdrantVectorStore({ url: 'http://127.0.0.1:' + process.argv[process.argv.length - 1], timeoutMs: 2000 });
out.afterStore = loaded();
store.listCollections().then(
  () => console.log(JSON.stringify({ ...out, error: 'none' })),
  (err) => console.log(JSON.stringify({ ...out, code: err.code, message: err.message })),
);
`;

it('loads the Qdrant client at the first QdrantVectorStore and maps its errors after', async () => {
  // a port nothing listens on (taken, then freed)
  const port = await freePort();
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script, String(port)], { encoding: 'utf8', timeout: 30_000 });
  const result = JSON.parse(out.trim().split('\n').pop()!);
  expect(result).toMatchObject({ atImport: false, embedded: 'function', afterStore: true, code: 'UPSTREAM_UNAVAILABLE' });
  expect(result.message).toContain(`Qdrant at http://127.0.0.1:${port} is unreachable`);
});
