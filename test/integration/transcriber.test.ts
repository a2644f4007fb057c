/**
 * transcriber-mcp through the real fleet: the launcher starts it and the gateway; the gateway lists
 * transcribe_audio and transcribe_url and routes native and JSON-RPC calls to it (speech made with
 * espeak-ng, recognised by ffmpeg + pocketsphinx), and the service answers directly on its routes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

describeWithProgram('espeak-ng', 'espeak-ng', 'transcriber-mcp through the fleet', () => {
  describeWithProgram('pocketsphinx_continuous', 'pocketsphinx pocketsphinx-en-us', 'embedded engine', () => {
    let fleet: FleetHandle;
    const tmp = tempDir('transcriber-fleet-');
    const workspace = path.join(tmp.dir, 'workspace');

    beforeAll(async () => {
      fs.mkdirSync(workspace, { recursive: true });
      const wav = path.join(workspace, 'hello.wav');
      const res = spawnSync('espeak-ng', ['-v', 'en-us+klatt', '-s', '140', '-w', wav, 'hello world this is a test'], { encoding: 'utf8' });
      if (res.status !== 0) throw new Error(res.stderr);
      fleet = await startFleet({ dataDir: path.join(tmp.dir, 'data'), workspace, only: ['transcriber-mcp'] });
      await waitFor('transcriber tools in the gateway catalog', async () => {
        const { body } = await getJson(`${fleet.gateway}/tools/list`);
        return body.tools.some((t: { name: string }) => t.name === 'transcribe_audio');
      });
    }, 120_000);

    afterAll(async () => {
      await fleet?.stop();
      tmp.cleanup();
    }, 60_000);

    it('lists transcribe_audio and transcribe_url in the gateway catalog with their schemas', async () => {
      const { body } = await getJson(`${fleet.gateway}/tools/list`);
      const tools = body.tools.filter((t: { name: string }) => t.name.startsWith('transcribe_'));
      expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(['transcribe_audio', 'transcribe_url']);
      const audio = tools.find((t: { name: string }) => t.name === 'transcribe_audio');
      expect(audio.inputSchema.properties.file_path.description).toMatch(/workspace/);
    });

    it('transcribes through the gateway (native and JSON-RPC) and directly', async () => {
      const native = await postJson(`${fleet.gateway}/mcp`, { tool: 'transcribe_audio', arguments: { file_path: 'hello.wav' } });
      expect(native.status).toBe(200);
      expect(native.body.result).toMatchObject({ engine: 'pocketsphinx', language: 'en' });
      expect(native.body.result.text).toContain('hello world');
      const rpc = await postJson(`${fleet.gateway}/mcp`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'transcribe_url', arguments: { url: 'http://127.0.0.1:1/a.wav' } },
      });
      expect(rpc.body.result.isError).toBe(true);
      expect(JSON.stringify(rpc.body.result)).toMatch(/FORBIDDEN|refused/i);
      const direct = fleet.serviceUrl('transcriber-mcp', 7013);
      const status = await getJson(`${direct}/`);
      expect(status.body).toMatchObject({ engine: 'pocketsphinx', languages: ['en'], ready: true });
      const rest = await postJson(`${direct}/transcribe/audio`, { file_path: 'hello.wav' });
      expect(rest.status).toBe(200);
      expect(rest.body.result.text).toContain('hello world');
    });
  });
});
