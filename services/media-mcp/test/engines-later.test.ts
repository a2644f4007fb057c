import fs from 'node:fs';
import path from 'node:path';
import { describeWithProgram, makeTone, tempDir } from '@mcp-fleet/testing';
import { mediaApp } from './support';

jest.setTimeout(30_000);

// Regression (issue 28): after `apt-get install ffmpeg` the service kept answering "not installed" until restarted.
describeWithProgram('ffmpeg', 'ffmpeg', 'media-mcp: engines installed after the start are found', () => {
  const bin = tempDir('media-bin-');
  let m: Awaited<ReturnType<typeof mediaApp>>;
  beforeAll(async () => {
    m = await mediaApp({ FFMPEG_PATH: path.join(bin.dir, 'ffmpeg'), FFPROBE_PATH: path.join(bin.dir, 'ffprobe') });
    makeTone(path.join(m.ws, 'tone.wav'), { seconds: 1 });
  });
  afterAll(async () => {
    await m.close();
    bin.cleanup();
  });

  it('answers NOT_CONFIGURED while missing, then works without a restart once installed', async () => {
    const missing = await m.call('media_analyze', { path: 'tone.wav' }).expect(503);
    expect(missing.body).toMatchObject({ code: 'NOT_CONFIGURED' });
    expect(missing.body.error).toMatch(/apt-get install ffmpeg/);
    // "installed": the programs appear where the configuration points
    fs.symlinkSync('/usr/bin/ffmpeg', path.join(bin.dir, 'ffmpeg'));
    fs.symlinkSync('/usr/bin/ffprobe', path.join(bin.dir, 'ffprobe'));
    await new Promise((r) => setTimeout(r, 5100));
    const found = await m.call('media_analyze', { path: 'tone.wav' }).expect(200);
    expect(found.body.result).toMatchObject({ kind: 'audio' });
  });
});
