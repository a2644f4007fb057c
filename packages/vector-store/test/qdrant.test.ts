import { QdrantVectorStore, type VectorStore } from '../src';
import { describeVectorStoreBehaviour } from './behaviour';

/**
 * The same behaviour suite against a real Qdrant. No Qdrant runs on this machine, so it runs only
 * when TEST_QDRANT_URL names one (and fails under REQUIRE_BACKENDS=1 when it does not).
 */
const url = process.env.TEST_QDRANT_URL;

if (url) {
  const store: VectorStore = new QdrantVectorStore({ url, apiKey: process.env.TEST_QDRANT_API_KEY, timeoutMs: 10_000 });
  describeVectorStoreBehaviour(`QdrantVectorStore [${url}]`, { store: () => store });
} else if (process.env.REQUIRE_BACKENDS === '1') {
  describe('QdrantVectorStore', () => {
    it('needs TEST_QDRANT_URL (REQUIRE_BACKENDS=1)', () => {
      throw new Error('Set TEST_QDRANT_URL to a Qdrant server (e.g. http://127.0.0.1:6333) to run the Qdrant behaviour suite.');
    });
  });
} else {
  describe.skip('QdrantVectorStore [skipped: set TEST_QDRANT_URL to run the behaviour suite against a real Qdrant]', () => {
    it('runs the shared behaviour suite', () => undefined);
  });
}
