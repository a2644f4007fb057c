import fs from 'node:fs';
import path from 'node:path';
import { getService } from '@mcp-fleet/inventory';
import { OutboundPolicy } from '@mcp-fleet/outbound';
import { serve } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import request from 'supertest';
import sharp from 'sharp';
import { mediaApp } from './support';

// Real engines on a shared 2-core machine: a call can take seconds while other suites run.
jest.setTimeout(30_000);

let m: Awaited<ReturnType<typeof mediaApp>>;
let web: RunningServer;
const served = new Map<string, Buffer>();

/** 400 × 300: left half red, right half blue, so crops and rotations are checkable by colour. */
async function twoColour(): Promise<Buffer> {
  const red = await sharp({ create: { width: 200, height: 300, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  return sharp({ create: { width: 400, height: 300, channels: 3, background: '#0000ff' } })
    .composite([{ input: red, left: 0, top: 0 }])
    .removeAlpha()
    .png()
    .toBuffer();
}

beforeAll(async () => {
  m = await mediaApp({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  fs.writeFileSync(path.join(m.ws, 'two.png'), await twoColour());
  // A JPEG with EXIF orientation 6 (shown rotated 90° clockwise) and an sRGB ICC profile.
  await sharp({ create: { width: 64, height: 32, channels: 3, background: '#00ff00' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withIccProfile('srgb')
    .toFile(path.join(m.ws, 'rotated.jpg'));
  await sharp({ create: { width: 50, height: 40, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0.5 } } })
    .png()
    .toFile(path.join(m.ws, 'alpha.png'));
  const jpeg = fs.readFileSync(path.join(m.ws, 'rotated.jpg'));
  fs.writeFileSync(path.join(m.ws, 'truncated.jpg'), jpeg.subarray(0, Math.floor(jpeg.length / 2)));
  fs.writeFileSync(path.join(m.ws, 'empty.png'), Buffer.alloc(0));
  fs.writeFileSync(path.join(m.ws, 'noise.bin'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)));
  // 10,000 × 10,000 of one colour: a few hundred KB on disk, 300 MB once decoded.
  await sharp({ create: { width: 10_000, height: 10_000, channels: 3, background: '#ffffff' }, limitInputPixels: false })
    .png({ compressionLevel: 9 })
    .toFile(path.join(m.ws, 'bomb.png'));
  served.set('/two.png', fs.readFileSync(path.join(m.ws, 'two.png')));
  web = await serve((req, res) => {
    const body = served.get(req.url ?? '');
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/two.png' }).end();
    } else if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(3 * 1024 * 1024, 1));
    } else if (body) res.writeHead(200, { 'content-type': 'image/png' }).end(body);
    else res.writeHead(404).end();
  });
}, 60_000);

afterAll(async () => {
  await web?.stop();
  await m?.close();
});

const out = (rel: string) => path.join(m.ws, rel);

describe('media-mcp images (sharp)', () => {
  it('lists exactly the inventory tools, each field described', async () => {
    const res = await request(m.svc.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(getService('media-mcp')!.tools);
    // long work: the gateway may run media_process as an MCP task (docs/gateway.md, "Tasks")
    const execution = Object.fromEntries(res.body.tools.map((t: { name: string; execution?: unknown }) => [t.name, t.execution]));
    expect(execution).toEqual({ media_process: { taskSupport: 'optional' }, media_analyze: undefined, media_query: undefined });
    // Every property, at any depth and in every branch of a union, carries a description.
    const undescribed: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const n = node as { properties?: Record<string, { description?: string }> };
      for (const [k, v] of Object.entries(n.properties ?? {})) if (!v.description) undescribed.push(`${at}.${k}`);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}.${k}`);
    };
    for (const t of res.body.tools) walk(t.inputSchema, t.name);
    expect(undescribed).toEqual([]);
    for (const t of res.body.tools) expect(t.description.length).toBeGreaterThan(150);
  });

  it('analyses a PNG: format, dimensions, channels, per-channel statistics and the dominant colour', async () => {
    const res = await m.call('media_analyze', { path: 'two.png' }).expect(200);
    const r = res.body.result;
    expect(r).toMatchObject({ kind: 'image', format: 'png', width: 400, height: 300, hasAlpha: false, colourSpace: 'srgb', exif: false });
    const [red, green, blue] = r.channelStats;
    expect([red.channel, red.min, red.max, red.mean]).toEqual(['red', 0, 255, 127.5]);
    expect(green.max).toBe(0);
    expect(blue.mean).toBe(127.5);
    expect(['#ff0000', '#0000ff']).toContain(r.dominant.hex.replace(/[0-9a-f]{2}/g, (h: string) => (parseInt(h, 16) > 127 ? 'ff' : '00')));
  });

  it('reports EXIF orientation, the upright dimensions, ICC and alpha', async () => {
    const jpg = (await m.call('media_analyze', { path: 'rotated.jpg' }).expect(200)).body.result;
    expect(jpg).toMatchObject({
      format: 'jpeg',
      width: 64,
      height: 32,
      orientation: 6,
      displayWidth: 32,
      displayHeight: 64,
      exif: true,
      icc: true,
    });
    const png = (await m.call('media_analyze', { path: 'alpha.png' }).expect(200)).body.result;
    expect(png).toMatchObject({ hasAlpha: true, isOpaque: false, channels: 4 });
    expect(png.channelStats[3]).toMatchObject({ channel: 'alpha', min: 128, max: 128 });
  });

  it.each([
    ['cover', { width: 100, height: 100 }, [100, 100]],
    ['contain', { width: 100, height: 100 }, [100, 100]],
    ['fill', { width: 120, height: 30 }, [120, 30]],
    ['inside', { width: 100, height: 100 }, [100, 75]],
    ['outside', { width: 100, height: 100 }, [133, 100]],
  ])('resizes with fit %s to the asked box', async (fit, box, [w, h]) => {
    const res = await m
      .call('media_process', { path: 'two.png', operation: 'image', resize: { ...box, fit }, output: `fit-${fit}` })
      .expect(200);
    const [o] = res.body.result.outputs;
    expect(o.path).toBe(`media-output/fit-${fit}.png`);
    expect([o.analysis.width, o.analysis.height]).toEqual([w, h]);
    const meta = await sharp(out(o.path)).metadata();
    expect([meta.width, meta.height]).toEqual([w, h]);
  });

  it('crops, rotates and converts: the right half is blue, a 90° turn swaps the sides', async () => {
    const crop = await m.call('media_process', {
      path: 'two.png',
      operation: 'image',
      crop: { left: 200, top: 0, width: 200, height: 300 },
      output: 'crop',
    });
    expect(crop.status).toBe(200);
    expect(crop.body.result.outputs[0].analysis).toMatchObject({ width: 200, height: 300, dominant: { r: expect.any(Number) } });
    const { dominant } = crop.body.result.outputs[0].analysis;
    expect(dominant.b).toBeGreaterThan(200);
    expect(dominant.r).toBeLessThan(50);
    const rot = (await m.call('media_process', { path: 'two.png', operation: 'image', rotate: 90, output: 'rot' }).expect(200)).body.result
      .outputs[0];
    expect([rot.analysis.width, rot.analysis.height]).toEqual([300, 400]);
    // Red was on the left; after a clockwise turn it is on top.
    // stats() reads its input, so the strip is cut out first.
    const strip = await sharp(out(rot.path)).extract({ left: 0, top: 0, width: 300, height: 100 }).png().toBuffer();
    const top = await sharp(strip).stats();
    expect(top.dominant.r).toBeGreaterThan(200);
  });

  it.each(['jpeg', 'png', 'webp', 'avif'])('converts to %s (checked by decoding the output)', async (format) => {
    const res = await m
      .call('media_process', { path: 'two.png', operation: 'image', format, quality: 70, output: `conv-${format}` })
      .expect(200);
    const [o] = res.body.result.outputs;
    expect(o.analysis.format).toBe(format === 'avif' ? 'heif' : format);
    const meta = await sharp(out(o.path)).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual([format === 'avif' ? 'heif' : format, 400, 300]);
    if (format === 'avif') expect(meta.compression).toBe('av1');
  });

  it('makes a thumbnail upright from EXIF, and strips metadata unless told to keep it', async () => {
    const thumb = (await m.call('media_process', { path: 'rotated.jpg', operation: 'image', thumbnail: 16, output: 'thumb' }).expect(200))
      .body.result.outputs[0].analysis;
    expect(thumb).toMatchObject({ width: 8, height: 16, exif: false, icc: false });
    expect(thumb.orientation).toBeUndefined();
    const kept = (
      await m
        .call('media_process', { path: 'rotated.jpg', operation: 'image', autoOrient: false, stripMetadata: false, output: 'kept' })
        .expect(200)
    ).body.result.outputs[0].analysis;
    expect(kept).toMatchObject({ exif: true, icc: true, orientation: 6 });
  });

  it('never writes over an existing output unless overwrite is true', async () => {
    await m.call('media_process', { path: 'two.png', operation: 'image', thumbnail: 10, output: 'same.png' }).expect(200);
    const again = await m.call('media_process', { path: 'two.png', operation: 'image', thumbnail: 20, output: 'same.png' }).expect(409);
    expect(again.body.code).toBe('CONFLICT');
    expect((await sharp(out('media-output/same.png')).metadata()).width).toBe(10);
    await m.call('media_process', { path: 'two.png', operation: 'image', thumbnail: 20, output: 'same.png', overwrite: true }).expect(200);
    expect((await sharp(out('media-output/same.png')).metadata()).width).toBe(20);
    expect(fs.readdirSync(out('media-output')).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('reads base64 input and a URL through the outbound client (redirect followed)', async () => {
    const b64 = fs.readFileSync(path.join(m.ws, 'alpha.png')).toString('base64');
    const a = (await m.call('media_analyze', { base64: b64 }).expect(200)).body.result;
    expect(a).toMatchObject({ source: 'base64', width: 50, height: 40 });
    const u = (await m.call('media_analyze', { url: `${web.url}/redirect` }).expect(200)).body.result;
    expect(u).toMatchObject({ format: 'png', width: 400, height: 300 });
    const p = (await m.call('media_process', { url: `${web.url}/two.png`, operation: 'image', thumbnail: 40 }).expect(200)).body.result;
    expect(p.outputs[0]).toMatchObject({ path: 'media-output/two-image.png', analysis: { width: 40, height: 30 } });
    expect(fs.readdirSync(path.join(m.data, 'media-mcp', 'scratch'))).toEqual([]);
  });

  it('refuses a loopback URL that is not allowlisted, and a body over the cap', async () => {
    const strict = await mediaApp({ MEDIA_MAX_URL_BYTES: '1048576' });
    try {
      const res = await strict.call('media_analyze', { url: `${web.url}/two.png` }).expect(403);
      expect(res.body).toMatchObject({ code: 'FORBIDDEN' });
      expect(res.body.error).toMatch(/OUTBOUND_ALLOWLIST/);
    } finally {
      await strict.close();
    }
    const small = await mediaApp({ OUTBOUND_ALLOWLIST: '127.0.0.1', MEDIA_MAX_URL_BYTES: '1048576' }, new OutboundPolicy(['127.0.0.1']));
    try {
      const res = await small.call('media_analyze', { url: `${web.url}/big` }).expect(413);
      expect(res.body.error).toMatch(/MEDIA_MAX_URL_BYTES/);
    } finally {
      await small.close();
    }
  });

  it.each([
    ['a zero-byte file', { path: 'empty.png' }, 400, 'VALIDATION_ERROR', /empty/],
    ['a truncated JPEG', { path: 'truncated.jpg' }, 400, 'VALIDATION_ERROR', /corrupt or truncated/],
    ['a 10,000 × 10,000 image bomb', { path: 'bomb.png' }, 400, 'VALIDATION_ERROR', /100000000 pixels, over MEDIA_MAX_PIXELS/],
    ['a path escape', { path: '../../etc/passwd' }, 403, 'FORBIDDEN', /workspace/],
    ['an absolute path outside the roots', { path: '/etc/hostname' }, 403, 'FORBIDDEN', /outside the workspace roots/],
    ['a missing file', { path: 'nope.png' }, 404, 'NOT_FOUND', /does not exist/],
    ['two sources at once', { path: 'two.png', base64: 'AAAA' }, 400, 'VALIDATION_ERROR', /only one/],
    ['invalid base64', { base64: '!!!' }, 400, 'VALIDATION_ERROR', /base64/],
  ])('media_analyze refuses %s cleanly', async (_label, args, status, code, message) => {
    const res = await m.call('media_analyze', args);
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.body.error).toMatch(message);
  });

  it('media_process refuses the bomb, a crop outside the image, an output outside the folder and a non-image', async () => {
    const bomb = await m.call('media_process', { path: 'bomb.png', operation: 'image', thumbnail: 100 }).expect(400);
    expect(bomb.body.error).toMatch(/MEDIA_MAX_PIXELS/);
    const crop = await m
      .call('media_process', {
        path: 'two.png',
        operation: 'image',
        crop: { left: 350, top: 0, width: 100, height: 10 },
        output: 'badcrop',
      })
      .expect(400);
    expect(crop.body.error).toMatch(/crop lies outside/);
    const esc = await m.call('media_process', { path: 'two.png', operation: 'image', output: '../escaped.png' }).expect(403);
    expect(esc.body.code).toBe('FORBIDDEN');
    expect(fs.existsSync(path.join(m.ws, 'escaped.png'))).toBe(false);
    const abs = await m.call('media_process', { path: 'two.png', operation: 'image', output: '/tmp/x.png' }).expect(400);
    expect(abs.body.code).toBe('VALIDATION_ERROR');
    const notImage = await m.call('media_process', { path: 'noise.bin', operation: 'image' }).expect(400);
    expect(notImage.body.error).toMatch(/needs a JPEG, PNG/);
  });

  it('answers over POST /tools/call too, and /health names the engines', async () => {
    const res = await request(m.svc.app)
      .post('/tools/call')
      .send({ name: 'media_analyze', arguments: { path: 'alpha.png' } })
      .expect(200);
    expect(res.body.result).toMatchObject({ width: 50, height: 40 });
    const health = await request(m.svc.app).get('/health').expect(200);
    expect(health.body.checks.sharp).toMatchObject({ status: 'ok', detail: { sharp: expect.any(String) } });
    expect(Object.keys(health.body.checks)).toEqual(expect.arrayContaining(['ffmpeg', 'ffprobe', 'jobs']));
  });
});
