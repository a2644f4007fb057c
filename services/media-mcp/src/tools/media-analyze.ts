import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { analyzeInput } from '../analyze';
import type { MediaDeps } from '../deps';
import { exactlyOneSource, sourceShape } from '../media/input';

export const analyzeInputSchema = z
  .object({
    ...sourceShape,
    loudness: z
      .boolean()
      .default(true)
      .describe(
        'For audio and video: also measure EBU R128 integrated loudness, loudness range and true peak (decodes the whole audio; default true).',
      ),
  })
  .strict()
  .superRefine(exactlyOneSource);

export const mediaAnalyzeTool = (deps: MediaDeps) =>
  defineTool({
    name: 'media_analyze',
    title: 'Analyse media',
    description:
      'Describe an image, audio or video file. Images (sharp): format, dimensions, orientation, colour space, alpha, EXIF/ICC/XMP present, per-channel statistics, dominant colour. ' +
      'Audio/video (ffprobe): container, duration, bit rate, every stream with codec, resolution, frame rate, sample rate, channels and language, plus EBU R128 loudness and true peak (ffmpeg ebur128). ' +
      `Input: a workspace path (up to ${deps.config.MEDIA_MAX_INPUT_BYTES} bytes), a URL fetched through the outbound policy (up to ${deps.config.MEDIA_MAX_URL_BYTES} bytes) or base64 (up to ${deps.config.MEDIA_MAX_BASE64_BYTES} bytes); ` +
      `images over ${deps.config.MEDIA_MAX_PIXELS} pixels are refused. Unknown, corrupt or empty files answer VALIDATION_ERROR; audio/video without ffmpeg installed answer NOT_CONFIGURED.`,
    input: analyzeInputSchema,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: (args, ctx) => analyzeInput(deps, args, ctx),
  });
