/**
 * What media_process accepts, one schema per operation: shared by the tool (tools/media-process.ts),
 * which validates with it, and the work (process.ts), which takes its output.
 */

import { z } from 'zod';
import { AUDIO_FORMATS, PRESET_NAMES } from './media/av-process';
import { FITS, OUTPUT_IMAGE_FORMATS } from './media/image';
import { exactlyOneSource, sourceShape } from './media/input';

const seconds = (what: string) => z.number().min(0).max(86_400).describe(what);

const baseShape = {
  ...sourceShape,
  output: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe(
      'Output file name relative to the output folder (MEDIA_OUTPUT_DIR); default <input name>-<operation>.<ext>. The extension is added when missing.',
    ),
  overwrite: z.boolean().default(false).describe('Replace an existing output file; false (default) answers CONFLICT instead.'),
  async: z
    .boolean()
    .optional()
    .describe(
      'true: always answer a job id at once (follow it with media_query); false: always wait. Unset: audio/video longer than MEDIA_JOB_THRESHOLD_SECONDS becomes a job.',
    ),
};

const imageOp = z
  .object({
    ...baseShape,
    operation: z
      .literal('image')
      .describe('Image work through sharp, applied in this order: orient, rotate, crop, resize, thumbnail, encode.'),
    autoOrient: z.boolean().default(true).describe('Turn the image upright from its EXIF orientation first (default true).'),
    rotate: z
      .number()
      .min(-360)
      .max(360)
      .optional()
      .describe('Rotate clockwise by this many degrees (any angle; corners filled with background).'),
    background: z
      .string()
      .max(64)
      .optional()
      .describe('Fill colour for rotate and for resize fit "contain", e.g. "#ffffff" or "transparent" (default black).'),
    crop: z
      .object({
        left: z.number().int().min(0).describe('Left edge, pixels.'),
        top: z.number().int().min(0).describe('Top edge, pixels.'),
        width: z.number().int().min(1).describe('Width, pixels.'),
        height: z.number().int().min(1).describe('Height, pixels.'),
      })
      .strict()
      .optional()
      .describe('Cut out this rectangle (after orient and rotate); outside the image is VALIDATION_ERROR.'),
    resize: z
      .object({
        width: z.number().int().min(1).max(16_384).optional().describe('Target width, pixels (at most 16384).'),
        height: z.number().int().min(1).max(16_384).optional().describe('Target height, pixels (at most 16384).'),
        fit: z
          .enum(FITS)
          .default('cover')
          .describe('How the image fits the box: cover (crop), contain (letterbox), fill (stretch), inside, outside.'),
        withoutEnlargement: z.boolean().default(false).describe('Never make the image larger than it is.'),
      })
      .strict()
      .refine((r) => r.width !== undefined || r.height !== undefined, 'give width, height or both')
      .optional()
      .describe('Resize to width and/or height (one alone keeps the aspect ratio).'),
    thumbnail: z
      .number()
      .int()
      .min(1)
      .max(4096)
      .optional()
      .describe('Shrink to fit a square of this many pixels, keeping the aspect ratio.'),
    format: z
      .enum(OUTPUT_IMAGE_FORMATS)
      .optional()
      .describe('Output format: jpeg, png, webp or avif (default: the input format when one of these, else png).'),
    quality: z.number().int().min(1).max(100).optional().describe('Encoder quality for jpeg, webp and avif (1-100).'),
    stripMetadata: z.boolean().default(true).describe('Drop EXIF, ICC, XMP from the output (default true); false keeps them.'),
  })
  .strict();

const transcodeOp = z
  .object({
    ...baseShape,
    operation: z.literal('transcode').describe('Re-encode to a named preset.'),
    preset: z
      .enum(PRESET_NAMES)
      .describe('mp4_h264 (H.264/AAC MP4), webm_vp9 (VP9/Opus WebM), or audio only: mp3, aac (.m4a), opus, flac, wav (16-bit PCM).'),
    height: z
      .number()
      .int()
      .min(16)
      .max(4320)
      .optional()
      .describe('Scale video to this height (width follows the aspect ratio); video presets only.'),
  })
  .strict();

const extractAudioOp = z
  .object({
    ...baseShape,
    operation: z.literal('extract_audio').describe('Write the first audio stream alone.'),
    format: z.enum(AUDIO_FORMATS).default('mp3').describe('Audio format: mp3 (default), aac, opus, flac or wav.'),
  })
  .strict();

const trimOp = z
  .object({
    ...baseShape,
    operation: z.literal('trim').describe('Cut a time range (re-encoded, so the cut is exact); the container follows the input.'),
    start: seconds('Start of the kept range, seconds (default 0).').default(0),
    end: seconds('End of the kept range, seconds (default: the end of the input).').optional(),
    duration: seconds('Length of the kept range, seconds (instead of end).').optional(),
  })
  .strict();

const frameOp = z
  .object({
    ...baseShape,
    operation: z.literal('frame').describe('One video frame as an image.'),
    at: seconds('Time of the frame, seconds (default 0).').default(0),
    format: z.enum(['png', 'jpeg']).default('png').describe('Image format: png (default) or jpeg.'),
    width: z.number().int().min(16).max(8192).optional().describe('Scale the frame to this width (height follows).'),
  })
  .strict();

const resampleOp = z
  .object({
    ...baseShape,
    operation: z.literal('resample').describe('Change the sample rate (and optionally channel count) of the first audio stream.'),
    sampleRate: z.number().int().min(8000).max(192_000).describe('Target sample rate, Hz (8000-192000).'),
    channels: z.number().int().min(1).max(8).optional().describe('Target channel count (1 mono, 2 stereo...).'),
    format: z.enum(AUDIO_FORMATS).default('wav').describe('Audio format: wav (default), flac, mp3, aac or opus.'),
  })
  .strict();

const normalizeOp = z
  .object({
    ...baseShape,
    operation: z.literal('normalize').describe("EBU R128 loudness normalisation (ffmpeg's loudnorm, two passes, linear)."),
    targetLufs: z
      .number()
      .min(-70)
      .max(-5)
      .default(-23)
      .describe('Target integrated loudness, LUFS (default -23, EBU R128; -16 for podcasts).'),
    truePeak: z.number().min(-9).max(0).default(-1).describe('Maximum true peak, dBTP (default -1).'),
    lra: z.number().min(1).max(50).default(11).describe('Target loudness range, LU (default 11).'),
    format: z
      .enum(AUDIO_FORMATS)
      .optional()
      .describe('Audio format of the output (default wav); unset for a video input: video copied, audio AAC, in Matroska (.mkv).'),
  })
  .strict();

export const processInput = z
  .discriminatedUnion('operation', [imageOp, transcodeOp, extractAudioOp, trimOp, frameOp, resampleOp, normalizeOp])
  .superRefine(exactlyOneSource)
  .superRefine((args, ctx) => {
    if (args.operation === 'trim' && args.end !== undefined && args.duration !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration'], message: 'give end or duration, not both' });
    }
  });

export type ProcessArgs = z.output<typeof processInput>;
