import type { ToolContext } from '@mcp-fleet/kit';
import type { MediaDeps } from './deps';
import { analyzeAv, type AvAnalysis } from './media/av';
import { analyzeImage, readHead, sniffImage, type ImageAnalysis } from './media/image';
import { openInput, type SourceArgs } from './media/input';

export type Analysis = ImageAnalysis | AvAnalysis;

/** Analyses a local file: images through sharp, anything else through ffprobe (and ebur128 loudness). */
export async function analyzeFile(
  deps: MediaDeps,
  file: string,
  source: string,
  options: { loudness: boolean; signal?: AbortSignal },
): Promise<Analysis> {
  if (sniffImage(await readHead(file))) return analyzeImage(file, deps.config.MEDIA_MAX_PIXELS, source);
  await deps.engines.require();
  return analyzeAv(deps.programs, file, source, { loudness: options.loudness, signal: options.signal });
}

export async function analyzeInput(deps: MediaDeps, args: SourceArgs & { loudness: boolean }, ctx: ToolContext) {
  const input = await openInput(deps.input, args, ctx.signal);
  try {
    const analysis = await analyzeFile(deps, input.file, input.source, { loudness: args.loudness, signal: ctx.signal });
    return { source: input.source, bytes: input.bytes, ...analysis };
  } finally {
    await input.release();
  }
}
