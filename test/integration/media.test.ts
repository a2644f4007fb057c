/**
 * media-mcp through the real fleet: the launcher starts it and the gateway; the gateway lists its
 * tools and routes native and JSON-RPC calls to it (analysis of a tone made with ffmpeg, a
 * thumbnail made through sharp, a job followed with media_query), and the service answers directly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeWithProgram, makeMedia, makeTone, tempDir } from '@mcp-fleet/testing';
import { getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

describeWithProgram('ffmpeg', 'ffmpeg', 'media-mcp through the fleet', () => {
  let fleet: FleetHandle;
  const tmp = tempDir('media-fleet-');
  const workspace = path.join(tmp.dir, 'workspace');

  beforeAll(async () => {
    fs.mkdirSync(workspace, { recursive: true });
    makeTone(path.join(workspace, 'tone.wav'), { seconds: 2 });
    makeMedia('-f', 'lavfi', '-i', 'testsrc2=size=640x480:duration=1', '-frames:v', '1', path.join(workspace, 'pattern.png'));
    fleet = await startFleet({ dataDir: path.join(tmp.dir, 'data'), workspace, only: ['media-mcp'] });
    await waitFor('media tools in the gateway catalog', async () => {
      const { body } = await getJson(`${fleet.gateway}/tools/list`);
      return body.tools.some((t: { name: string }) => t.name === 'media_analyze');
    });
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  }, 60_000);

  it('lists the three media tools in the gateway catalog with their schemas', async () => {
    const { body } = await getJson(`${fleet.gateway}/tools/list`);
    const media = body.tools.filter((t: { name: string }) => t.name.startsWith('media_'));
    expect(media.map((t: { name: string }) => t.name).sort()).toEqual(['media_analyze', 'media_process', 'media_query']);
    const analyze = media.find((t: { name: string }) => t.name === 'media_analyze');
    expect(analyze.inputSchema.properties.path.description).toMatch(/workspace/);
  });

  it('analyses a tone through the gateway (native) and makes a thumbnail through JSON-RPC', async () => {
    const native = await postJson(`${fleet.gateway}/mcp`, { tool: 'media_analyze', arguments: { path: 'tone.wav' } });
    expect(native.status).toBe(200);
    expect(native.body.result.duration).toBeCloseTo(2.0, 2);
    expect(native.body.result.streams[0]).toMatchObject({ codec: 'pcm_s16le', sampleRate: 48000 });
    const rpc = await postJson(`${fleet.gateway}/mcp`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'media_process', arguments: { path: 'pattern.png', operation: 'image', thumbnail: 64, format: 'webp' } },
    });
    expect(rpc.body.result.isError).toBe(false);
    expect(rpc.body.result.structuredContent.outputs[0]).toMatchObject({
      path: 'media-output/pattern-image.webp',
      analysis: { format: 'webp', width: 64, height: 48 },
    });
    expect(fs.existsSync(path.join(workspace, 'media-output', 'pattern-image.webp'))).toBe(true);
  });

  it('runs a job through the gateway and follows it directly on the service', async () => {
    const started = await postJson(`${fleet.gateway}/mcp`, {
      tool: 'media_process',
      arguments: { path: 'tone.wav', operation: 'transcode', preset: 'opus', async: true },
    });
    expect(started.status).toBe(200);
    const id = started.body.result.job.id;
    const direct = `${fleet.serviceUrl('media-mcp', 7016)}/tools/call`;
    const done = await waitFor('the job to end', async () => {
      const res = await postJson(direct, { name: 'media_query', arguments: { action: 'get', jobId: id } });
      return ['succeeded', 'failed'].includes(res.body.result.state) ? res.body.result : undefined;
    });
    expect(done).toMatchObject({ state: 'succeeded', percent: 100, outputs: [{ path: 'media-output/tone-transcode.opus' }] });
    expect(done.outputs[0].analysis.streams[0]).toMatchObject({ codec: 'opus' });
    const health = await getJson(`${fleet.serviceUrl('media-mcp', 7016)}/health`);
    expect(health.body.checks).toMatchObject({ ffmpeg: { status: 'ok' }, ffprobe: { status: 'ok' }, sharp: { status: 'ok' } });
  });
});
