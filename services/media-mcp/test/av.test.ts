import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeWithProgram, makeClip, makeTone } from '@mcp-fleet/testing';
import request from 'supertest';
import { mediaApp } from './support';

function ffprobeDuration(file: string): number {
  const res = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
  return Number(res.stdout.trim());
}

// Real engines on a shared 2-core machine: a call can take seconds while other suites run.
jest.setTimeout(30_000);

let m: Awaited<ReturnType<typeof mediaApp>>;
const ws = (rel: string) => path.join(m.ws, rel);

describeWithProgram('ffmpeg', 'ffmpeg', 'media-mcp audio and video', () => {
  beforeAll(async () => {
    m = await mediaApp({ MEDIA_JOB_THRESHOLD_SECONDS: '30' });
    // A 440 Hz tone of exactly 2.0 s, mono 48 kHz, at about -21 LUFS.
    makeTone(ws('tone.wav'), { seconds: 2, extra: ['-c:a', 'pcm_s16le'] });
    // The same tone 20 dB quieter at 44.1 kHz, for normalisation.
    makeTone(ws('quiet.wav'), { seconds: 4, sampleRate: 44100, extra: ['-af', 'volume=-20dB'] });
    // 3 s of test pattern, 320x240 at 25 fps, with a stereo English 1 kHz tone.
    makeClip(ws('clip.mp4'), { seconds: 3, frequency: 1000, sampleRate: 44100, extra: ['-metadata:s:a:0', 'language=eng'] });
    const clip = fs.readFileSync(ws('clip.mp4'));
    fs.writeFileSync(ws('truncated.mp4'), clip.subarray(0, Math.floor(clip.length / 3)));
    fs.writeFileSync(ws('noise.bin'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)));
    fs.writeFileSync(ws('list.m3u8'), '#EXTM3U\n#EXTINF:1,\n/etc/passwd\n');
  }, 60_000);

  afterAll(async () => {
    await m?.close();
  });

  it('analyses a 2.0 s 440 Hz tone: duration, codec, rate, channels and EBU R128 loudness', async () => {
    const r = (await m.call('media_analyze', { path: 'tone.wav' }).expect(200)).body.result;
    expect(r).toMatchObject({ kind: 'audio', container: 'wav' });
    expect(r.duration).toBeCloseTo(2.0, 2);
    expect(r.streams).toEqual([expect.objectContaining({ type: 'audio', codec: 'pcm_s16le', sampleRate: 48000, channels: 1 })]);
    // A full-scale/8 sine (lavfi's default amplitude): about -21 LUFS, true peak about -18 dBTP.
    expect(r.loudness.integratedLufs).toBeGreaterThan(-23);
    expect(r.loudness.integratedLufs).toBeLessThan(-20);
    expect(r.loudness.truePeakDbtp).toBeCloseTo(-18.1, 0);
  });

  it('analyses a video: container, every stream with codec, resolution, frame rate, channels and language', async () => {
    const r = (await m.call('media_analyze', { path: 'clip.mp4', loudness: false }).expect(200)).body.result;
    expect(r.kind).toBe('video');
    expect(r.container).toMatch(/mp4/);
    expect(r.duration).toBeCloseTo(3, 1);
    expect(r.bitRate).toBeGreaterThan(0);
    expect(r.loudness).toBeUndefined();
    const video = r.streams.find((s: { type: string }) => s.type === 'video');
    const audio = r.streams.find((s: { type: string }) => s.type === 'audio');
    expect(video).toMatchObject({ codec: 'h264', width: 320, height: 240, frameRate: 25 });
    expect(audio).toMatchObject({ codec: 'aac', sampleRate: 44100, channels: 2, language: 'eng' });
  });

  describeWithProgram('espeak-ng', 'espeak-ng', 'speech', () => {
    it('analyses speech made with espeak-ng', async () => {
      const res = spawnSync('espeak-ng', ['-w', ws('speech.wav'), 'The quick brown fox jumps over the lazy dog.']);
      expect(res.status).toBe(0);
      const r = (await m.call('media_analyze', { path: 'speech.wav' }).expect(200)).body.result;
      expect(r.streams[0]).toMatchObject({ type: 'audio', sampleRate: 22050, channels: 1 });
      expect(r.duration).toBeGreaterThan(1.5);
      expect(r.loudness.integratedLufs).toBeGreaterThan(-40);
      expect(r.loudness.rangeLu).toEqual(expect.any(Number));
    });
  });

  it.each([
    ['a truncated MP4', 'truncated.mp4', /not a media file/],
    ['bytes that are no media', 'noise.bin', /not a media file/],
    ['a playlist naming another file', 'list.m3u8', /not a media file/],
  ])('refuses %s with VALIDATION_ERROR', async (_label, file, message) => {
    const res = await m.call('media_analyze', { path: file }).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.error).toMatch(message);
  });

  it('transcodes to mp3: the output is a 2.0 s MP3 analysed in the answer', async () => {
    const res = await m.call('media_process', { path: 'tone.wav', operation: 'transcode', preset: 'mp3' }).expect(200);
    const [o] = res.body.result.outputs;
    expect(o.path).toBe('media-output/tone-transcode.mp3');
    expect(o.analysis.streams[0]).toMatchObject({ codec: 'mp3', sampleRate: 48000 });
    expect(ffprobeDuration(ws(o.path))).toBeCloseTo(2.0, 1);
  });

  it('transcodes video to WebM/VP9 at a smaller height', async () => {
    const res = await m.call('media_process', { path: 'clip.mp4', operation: 'transcode', preset: 'webm_vp9', height: 120 }).expect(200);
    const a = res.body.result.outputs[0].analysis;
    expect(a.container).toMatch(/webm/);
    expect(a.streams.find((s: { type: string }) => s.type === 'video')).toMatchObject({ codec: 'vp9', width: 160, height: 120 });
    expect(a.streams.find((s: { type: string }) => s.type === 'audio')).toMatchObject({ codec: 'opus' });
  });

  it('extracts the audio of a video, trims to 1.0 s, and takes a frame as a PNG', async () => {
    const audio = (await m.call('media_process', { path: 'clip.mp4', operation: 'extract_audio', format: 'flac' }).expect(200)).body.result
      .outputs[0];
    expect(audio.analysis).toMatchObject({ kind: 'audio', streams: [expect.objectContaining({ codec: 'flac', channels: 2 })] });
    const trim = (await m.call('media_process', { path: 'clip.mp4', operation: 'trim', start: 0.5, duration: 1 }).expect(200)).body.result
      .outputs[0];
    expect(trim.path).toBe('media-output/clip-trim.mp4');
    expect(trim.analysis.duration).toBeGreaterThan(0.95);
    expect(trim.analysis.duration).toBeLessThan(1.1);
    const frame = (await m.call('media_process', { path: 'clip.mp4', operation: 'frame', at: 1.5 }).expect(200)).body.result.outputs[0];
    expect(frame.analysis).toMatchObject({ kind: 'image', format: 'png', width: 320, height: 240 });
    const past = await m.call('media_process', { path: 'clip.mp4', operation: 'frame', at: 10 }).expect(400);
    expect(past.body.error).toMatch(/after the end/);
  });

  it('resamples to 16 kHz mono', async () => {
    const res = await m.call('media_process', { path: 'clip.mp4', operation: 'resample', sampleRate: 16000, channels: 1 }).expect(200);
    const a = res.body.result.outputs[0].analysis;
    expect(a.streams).toEqual([expect.objectContaining({ codec: 'pcm_s16le', sampleRate: 16000, channels: 1 })]);
    expect(a.duration).toBeCloseTo(3, 1);
  });

  it('normalises loudness to within 1 LU of the target', async () => {
    const before = (await m.call('media_analyze', { path: 'quiet.wav' }).expect(200)).body.result.loudness.integratedLufs;
    expect(before).toBeLessThan(-38);
    const res = await m.call('media_process', { path: 'quiet.wav', operation: 'normalize', targetLufs: -16, truePeak: -1.5 }).expect(200);
    const { loudness, streams } = res.body.result.outputs[0].analysis;
    expect(Math.abs(loudness.integratedLufs - -16)).toBeLessThanOrEqual(1);
    expect(loudness.truePeakDbtp).toBeLessThanOrEqual(-1.4);
    expect(streams[0].sampleRate).toBe(44100);
  });

  it('refuses to process video whose frames exceed MEDIA_MAX_PIXELS, while still analysing it', async () => {
    const small = await mediaApp({ MEDIA_MAX_PIXELS: '50000' });
    try {
      fs.copyFileSync(ws('clip.mp4'), path.join(small.ws, 'clip.mp4'));
      const res = await small.call('media_process', { path: 'clip.mp4', operation: 'frame' }).expect(400);
      expect(res.body.error).toMatch(/320 × 240 pixels, over MEDIA_MAX_PIXELS \(50000\)/);
      expect(fs.existsSync(path.join(small.ws, 'media-output', 'clip-frame.png'))).toBe(false);
      const a = (await small.call('media_analyze', { path: 'clip.mp4', loudness: false }).expect(200)).body.result;
      expect(a.kind).toBe('video');
    } finally {
      await small.close();
    }
  });

  it('refuses audio operations on an image and video operations on audio', async () => {
    fs.writeFileSync(
      ws('pixel.png'),
      Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'),
    );
    const img = await m.call('media_process', { path: 'pixel.png', operation: 'transcode', preset: 'mp3' }).expect(400);
    expect(img.body.error).toMatch(/use operation "image"/);
    const frame = await m.call('media_process', { path: 'tone.wav', operation: 'frame' }).expect(400);
    expect(frame.body.error).toMatch(/needs a video stream/);
  });

  it('answers NOT_CONFIGURED naming the package when ffmpeg is missing, while images still work', async () => {
    const bare = await mediaApp({ FFMPEG_PATH: '/nonexistent/ffmpeg', FFPROBE_PATH: '/nonexistent/ffprobe' });
    try {
      fs.copyFileSync(ws('tone.wav'), path.join(bare.ws, 'tone.wav'));
      fs.copyFileSync(ws('pixel.png'), path.join(bare.ws, 'pixel.png'));
      const res = await bare.call('media_analyze', { path: 'tone.wav' }).expect(503);
      expect(res.body.code).toBe('NOT_CONFIGURED');
      expect(res.body.error).toMatch(/apt-get install ffmpeg/);
      const proc = await bare.call('media_process', { path: 'tone.wav', operation: 'trim', duration: 1 }).expect(503);
      expect(proc.body.code).toBe('NOT_CONFIGURED');
      await bare.call('media_analyze', { path: 'pixel.png' }).expect(200);
      const health = await request(bare.svc.app).get('/health').expect(200);
      expect(health.body.status).toBe('degraded');
      expect(health.body.checks.ffmpeg).toMatchObject({ status: 'error', required: false });
      expect(health.body.checks.ffmpeg.error).toMatch(/apt-get install ffmpeg/);
    } finally {
      await bare.close();
    }
    const health = await request(m.svc.app).get('/health').expect(200);
    expect(health.body.checks.ffmpeg).toMatchObject({ status: 'ok', detail: { version: expect.any(String) } });
  });
});
