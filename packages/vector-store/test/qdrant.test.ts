import { QdrantVectorStore, type VectorStore } from '../src';
import { describeVectorStoreBehaviour } from './behaviour';

/**
 * The same behaviour suite against a real Qdrant. No Qdrant can run on the CI machine (no Debian
 * package, no npm-shipped binary, no network), so REQUIRE_BACKENDS (the engines CI provides:
 * PostgreSQL, Redis, Mosquitto) does not cover it; REQUIRE_QDRANT=1 makes its absence fail.
 */
const url = process.env.TEST_QDRANT_URL;

if (url) {
  const store: VectorStore = new QdrantVectorStore({ url, apiKey: process.env.TEST_QDRANT_API_KEY, timeoutMs: 10_000 });
  describeVectorStoreBehaviour(`QdrantVectorStore [${url}]`, { store: () => store });
} else if (process.env.REQUIRE_QDRANT === '1') {
  describe('QdrantVectorStore', () => {
    it('needs TEST_QDRANT_URL (REQUIRE_QDRANT=1)', () => {
      throw new Error('Set TEST_QDRANT_URL to a Qdrant server (e.g. http://127.0.0.1:6333) to run the Qdrant behaviour suite.');
    });
  });
} else {
  describe.skip('QdrantVectorStore [skipped: set TEST_QDRANT_URL to run the behaviour suite against a real Qdrant]', () => {
    it('runs the shared behaviour suite', () => undefined);
  });
}
