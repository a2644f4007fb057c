import { tempDir } from '@mcp-fleet/testing';
import { EmbeddedVectorStore, type VectorStore } from '../src';
import { describeVectorStoreBehaviour } from './behaviour';

const tmp = tempDir('vector-store-');
let store: VectorStore;

beforeAll(async () => {
  store = await EmbeddedVectorStore.open({ dir: tmp.dir });
});

afterAll(async () => {
  await store.close();
  tmp.cleanup();
});

describeVectorStoreBehaviour('EmbeddedVectorStore', {
  store: () => store,
  reopen: async () => {
    await store.close();
    store = await EmbeddedVectorStore.open({ dir: tmp.dir });
  },
});
