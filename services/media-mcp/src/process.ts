import path from 'node:path';
import { AppError, type ToolContext } from '@mcp-fleet/kit';
import { analyzeFile } from './analyze';
import type { MediaDeps } from './deps';
import type { JobOutput } from './jobs';
import { probe } from './media/av';
import { planAv } from './media/av-process';
import { checkedMetadata, imageOutputFormat, processImage, readHead, sniffImage, type ImageOps } from './media/image';
import { openInput } from './media/input';
import { commitOutput, discardOutput, planOutput } from './media/output';
import type { ProcessArgs } from './process-input';

interface Work {
  ext: string;
  expectedSeconds: number;
  /** Writes the result to `out`. */
  run(out: string, signal: AbortSignal, onPercent: (p: number) => void): Promise<void>;
  /** Measure the output's loudness in its analysis. */
  loudness: boolean;
}

async function imageWork(deps: MediaDeps, args: Extract<ProcessArgs, { operation: 'image' }>, file: string, source: string): Promise<Work> {
  const max = deps.config.MEDIA_MAX_PIXELS;
  const meta = await checkedMetadata(file, max, source);
  const ops: ImageOps = {
    autoOrient: args.autoOrient,
    rotate: args.rotate,
    background: args.background,
    crop: args.crop,
    resize: args.resize,
    thumbnail: args.thumbnail,
    format: args.format,
    quality: args.quality,
    stripMetadata: args.stripMetadata,
  };
  const format = imageOutputFormat(ops, meta.format);
  if (args.crop && (!args.rotate || args.rotate % 90 === 0)) {
    // Checked before anything is written, against the upright (and turned) dimensions.
    const turned = (args.autoOrient && (meta.orientation ?? 1) >= 5) !== (Math.abs(args.rotate ?? 0) % 180 === 90);
    const [w, h] = turned ? [meta.height!, meta.width!] : [meta.width!, meta.height!];
    if (args.crop.left + args.crop.width > w || args.crop.top + args.crop.height > h) {
      throw new AppError(
        'VALIDATION_ERROR',
        `crop lies outside the image (${w} × ${h} once oriented and rotated); adjust left/top/width/height.`,
        {
          details: [{ path: 'crop', message: 'outside the image' }],
        },
      );
    }
  }
  return {
    ext: format === 'jpeg' ? 'jpg' : format,
    expectedSeconds: 0,
    loudness: false,
    run: async (out, _signal, onPercent) => {
      await processImage(file, out, ops, max, source);
      onPercent(100);
    },
  };
}

async function avWork(
  deps: MediaDeps,
  args: Exclude<ProcessArgs, { operation: 'image' }>,
  file: string,
  source: string,
  name: string,
  signal: AbortSignal,
): Promise<Work> {
  await deps.engines.require();
  const probed = await probe(deps.programs, file, source, { signal });
  // The image cap applies to video frames too: a huge frame size is a decoding bomb for ffmpeg as well.
  const max = deps.config.MEDIA_MAX_PIXELS;
  const huge = probed.streams.find((s) => s.type === 'video' && (s.width ?? 0) * (s.height ?? 0) > max);
  if (huge) {
    throw new AppError(
      'VALIDATION_ERROR',
      `The video frames of ${source} are ${huge.width} × ${huge.height} pixels, over MEDIA_MAX_PIXELS (${max}); refused before decoding.`,
      { details: [{ path: 'input', message: 'too many pixels per frame' }] },
    );
  }
  const plan = planAv(args, probed, path.extname(name).slice(1).toLowerCase());
  return {
    ext: plan.ext,
    expectedSeconds: plan.expectedSeconds,
    loudness: args.operation === 'normalize',
    run: (out, s, onPercent) => plan.run(deps.programs, file, out, s, onPercent),
  };
}

/** Opens the input, checks the operation against it, plans the output, then runs it now or as a job. */
export async function processMedia(deps: MediaDeps, args: ProcessArgs, ctx: ToolContext) {
  const input = await openInput(deps.input, args, ctx.signal);
  let handedOff = false;
  try {
    const isImage = Boolean(sniffImage(await readHead(input.file)));
    if (args.operation === 'image' && !isImage) {
      throw new AppError('VALIDATION_ERROR', 'operation "image" needs a JPEG, PNG, WebP, GIF, TIFF or AVIF/HEIF input; this is not one.', {
        details: [{ path: 'operation', message: 'not an image' }],
      });
    }
    if (args.operation !== 'image' && isImage) {
      throw new AppError('VALIDATION_ERROR', `operation "${args.operation}" works on audio or video; for an image use operation "image".`, {
        details: [{ path: 'operation', message: 'input is an image' }],
      });
    }
    const work =
      args.operation === 'image'
        ? await imageWork(deps, args, input.file, input.source)
        : await avWork(deps, args, input.file, input.source, input.name, ctx.signal);
    const out = await planOutput(deps.ws, deps.outputDir, {
      requested: args.output,
      inputName: input.name,
      suffix: args.operation,
      ext: work.ext,
      overwrite: args.overwrite,
    });
    const execute = async (signal: AbortSignal, onPercent: (p: number) => void): Promise<JobOutput[]> => {
      try {
        await work.run(out.temp, signal, onPercent);
      } catch (err) {
        await discardOutput(out);
        throw err;
      }
      const committed = await commitOutput(out);
      const analysis = await analyzeFile(deps, out.final, committed.path, { loudness: work.loudness, signal }).catch((err: unknown) => ({
        error: err instanceof AppError ? err.message : 'the output could not be analysed',
      }));
      return [{ ...committed, analysis }];
    };
    const asJob = args.async ?? work.expectedSeconds > deps.config.MEDIA_JOB_THRESHOLD_SECONDS;
    if (asJob) {
      const job = await deps.runner.submit(args.operation, input.source, out.temp, { run: execute, cleanup: input.release });
      handedOff = true;
      return { operation: args.operation, source: input.source, job: { id: job.id, state: job.state }, output: out.relative };
    }
    const outputs = await execute(ctx.signal, () => undefined);
    return { operation: args.operation, source: input.source, outputs };
  } finally {
    if (!handedOff) await input.release();
  }
}
