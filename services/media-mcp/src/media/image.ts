import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import type SharpFunction from 'sharp';
import type { FitEnum, Metadata, Sharp, Stats } from 'sharp';

/** The module is the function itself (CommonJS), as `import sharp from 'sharp'` gives it. */
type SharpModule = typeof SharpFunction;
let sharpModule: SharpModule | undefined;
let sharpLoadError: string | undefined;

/**
 * sharp and its libvips, loaded at the first image call rather than at start (some 8 MB the
 * service then does not hold while no image is asked for). Not loading is this installation's
 * fault, never the caller's: NOT_CONFIGURED, and /health reports it from then on.
 */
function sharp(...args: Parameters<SharpModule>): Sharp {
  if (!sharpModule) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      sharpModule = require('sharp') as SharpModule;
    } catch (err) {
      sharpLoadError = String((err as Error).message).split('\n')[0];
      throw new AppError('NOT_CONFIGURED', `sharp (libvips) does not load on this machine: ${sharpLoadError}. Reinstall it: pnpm install.`);
    }
  }
  return sharpModule(...args);
}

/** The health check's view: the versions once loaded; before, the installed package's version (or why it does not load). */
export function sharpStatus(): Record<string, string | boolean> {
  if (sharpLoadError) throw new Error(`sharp does not load: ${sharpLoadError}`);
  if (sharpModule) return { sharp: sharpModule.versions.sharp, vips: sharpModule.versions.vips, loaded: true };
  const pkg = path.join(path.dirname(require.resolve('sharp')), '..', 'package.json');
  return { sharp: (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version, loaded: false };
}

/** Formats told apart by their first bytes; anything else is tried as audio/video. */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif' | 'heif';

const HEIF_BRANDS: Record<string, ImageFormat> = { avif: 'avif', avis: 'avif', heic: 'heif', heix: 'heif', mif1: 'heif', msf1: 'heif' };

export function sniffImage(head: Buffer): ImageFormat | undefined {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  const tiff = head.subarray(0, 4).toString('latin1');
  if (tiff === 'II*\0' || tiff === 'MM\0*') return 'tiff';
  if (head.subarray(4, 8).toString('latin1') === 'ftyp') return HEIF_BRANDS[head.subarray(8, 12).toString('latin1')];
  return undefined;
}

export async function readHead(file: string, bytes = 64): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** sharp's and libvips' failures on the caller's bytes are the caller's problem: VALIDATION_ERROR, never a 500. */
export function imageError(err: unknown, source: string): AppError {
  if (err instanceof AppError) return err;
  const message = String((err as Error)?.message ?? err)
    .split('\n')[0]
    .slice(0, 300);
  if (/pixel limit/i.test(message)) {
    return new AppError('VALIDATION_ERROR', `The image ${source} is larger than MEDIA_MAX_PIXELS allows; refused (${message}).`, {
      details: [{ path: 'input', message: 'too many pixels' }],
    });
  }
  return new AppError('VALIDATION_ERROR', `The image ${source} could not be decoded: ${message}. It may be corrupt or truncated.`, {
    details: [{ path: 'input', message: 'undecodable image' }],
  });
}

export function openImage(file: string, maxPixels: number): Sharp {
  return sharp(file, { limitInputPixels: maxPixels, failOn: 'warning', sequentialRead: true });
}

/** Refuses images over the pixel cap from the header alone, before anything is decoded. */
export async function checkedMetadata(file: string, maxPixels: number, source: string) {
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw imageError(err, source);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!width || !height) throw imageError(new Error('no dimensions in the header'), source);
  if (width * height > maxPixels) {
    throw new AppError(
      'VALIDATION_ERROR',
      `The image ${source} is ${width} × ${height} = ${width * height} pixels, over MEDIA_MAX_PIXELS (${maxPixels}); refused without decoding it.`,
      { details: [{ path: 'input', message: 'too many pixels' }] },
    );
  }
  return meta;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface ImageAnalysis {
  kind: 'image';
  format: string;
  width: number;
  height: number;
  /** Dimensions once the EXIF orientation is applied. */
  displayWidth: number;
  displayHeight: number;
  orientation?: number;
  colourSpace?: string;
  channels?: number;
  bitDepth?: string;
  hasAlpha: boolean;
  isOpaque: boolean;
  pages?: number;
  density?: number;
  progressive?: boolean;
  exif: boolean;
  icc: boolean;
  xmp: boolean;
  channelStats: { channel: string; min: number; max: number; mean: number; stdev: number }[];
  dominant: { r: number; g: number; b: number; hex: string };
  entropy: number;
  sharpness: number;
}

const hex = (n: number) =>
  Math.max(0, Math.min(255, Math.round(n)))
    .toString(16)
    .padStart(2, '0');

export async function analyzeImage(file: string, maxPixels: number, source: string): Promise<ImageAnalysis> {
  const meta = await checkedMetadata(file, maxPixels, source);
  let stats: Stats;
  try {
    stats = await openImage(file, maxPixels).stats();
  } catch (err) {
    throw imageError(err, source);
  }
  const names =
    meta.channels === 1 || meta.channels === 2
      ? ['grey', 'alpha']
      : meta.space === 'cmyk'
        ? ['c', 'm', 'y', 'k', 'alpha']
        : ['red', 'green', 'blue', 'alpha'];
  const width = meta.width!;
  const height = meta.height!;
  const swapped = (meta.orientation ?? 1) >= 5;
  const { r, g, b } = stats.dominant;
  return {
    kind: 'image',
    format: meta.format ?? 'unknown',
    width,
    height,
    displayWidth: swapped ? height : width,
    displayHeight: swapped ? width : height,
    ...(meta.orientation ? { orientation: meta.orientation } : {}),
    ...(meta.space ? { colourSpace: meta.space } : {}),
    ...(meta.channels ? { channels: meta.channels } : {}),
    ...(meta.depth ? { bitDepth: meta.depth } : {}),
    hasAlpha: Boolean(meta.hasAlpha),
    isOpaque: stats.isOpaque,
    ...(meta.pages && meta.pages > 1 ? { pages: meta.pages } : {}),
    ...(meta.density ? { density: meta.density } : {}),
    ...(meta.isProgressive !== undefined ? { progressive: meta.isProgressive } : {}),
    exif: Boolean(meta.exif?.length),
    icc: Boolean(meta.icc?.length),
    xmp: Boolean(meta.xmp?.length),
    channelStats: stats.channels.map((c, i) => ({
      channel: names[i] ?? `channel${i}`,
      min: c.min,
      max: c.max,
      mean: round(c.mean),
      stdev: round(c.stdev),
    })),
    dominant: { r, g, b, hex: `#${hex(r)}${hex(g)}${hex(b)}` },
    entropy: round(stats.entropy, 3),
    sharpness: round(stats.sharpness, 3),
  };
}

export const FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const satisfies readonly (keyof FitEnum)[];
export const OUTPUT_IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type OutputImageFormat = (typeof OUTPUT_IMAGE_FORMATS)[number];

export interface ImageOps {
  autoOrient: boolean;
  rotate?: number;
  background?: string;
  crop?: { left: number; top: number; width: number; height: number };
  resize?: { width?: number; height?: number; fit: (typeof FITS)[number]; withoutEnlargement: boolean };
  thumbnail?: number;
  format?: OutputImageFormat;
  quality?: number;
  stripMetadata: boolean;
}

/** The output format: the asked one, else the input's when sharp writes it, else PNG. */
export function imageOutputFormat(ops: ImageOps, inputFormat: string | undefined): OutputImageFormat {
  if (ops.format) return ops.format;
  return (OUTPUT_IMAGE_FORMATS as readonly string[]).includes(inputFormat ?? '') ? (inputFormat as OutputImageFormat) : 'png';
}

/** Applies the operations in a fixed order: orient, rotate, crop, resize, thumbnail, encode. */
export async function processImage(file: string, out: string, ops: ImageOps, maxPixels: number, source: string): Promise<void> {
  const meta = await checkedMetadata(file, maxPixels, source);
  const format = imageOutputFormat(ops, meta.format);
  try {
    let p = openImage(file, maxPixels);
    if (ops.autoOrient) p = p.autoOrient();
    if (ops.rotate) p = p.rotate(ops.rotate, { background: ops.background ?? '#000000' });
    if (ops.crop) p = p.extract(ops.crop);
    if (ops.resize) {
      p = p.resize({
        width: ops.resize.width,
        height: ops.resize.height,
        fit: ops.resize.fit,
        withoutEnlargement: ops.resize.withoutEnlargement,
        background: ops.background ?? '#000000',
      });
    }
    if (ops.thumbnail) {
      if (ops.resize) p = sharp(await p.toBuffer(), { limitInputPixels: maxPixels });
      p = p.resize({ width: ops.thumbnail, height: ops.thumbnail, fit: 'inside', withoutEnlargement: true });
    }
    if (!ops.stripMetadata) p = p.keepMetadata();
    const quality = ops.quality;
    p =
      format === 'jpeg'
        ? p.jpeg({ quality: quality ?? 82, mozjpeg: false })
        : format === 'png'
          ? p.png()
          : format === 'webp'
            ? p.webp({ quality: quality ?? 80 })
            : p.avif({ quality: quality ?? 50, effort: 2 });
    await p.toFile(out);
  } catch (err) {
    if (/extract_area|bad extract area/i.test(String((err as Error)?.message))) {
      throw new AppError(
        'VALIDATION_ERROR',
        `crop lies outside the image (${meta.width} × ${meta.height} before rotation); adjust left/top/width/height.`,
        {
          details: [{ path: 'image.crop', message: 'outside the image' }],
        },
      );
    }
    throw imageError(err, source);
  }
}
