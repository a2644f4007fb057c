import { actionInput, defineTool } from '@mcp-fleet/kit';
import type { MediaDeps } from '../deps';
import { processMedia } from '../process';
import { processInput } from '../process-input';

export const mediaProcessTool = (deps: MediaDeps) =>
  defineTool({
    name: 'media_process',
    title: 'Process media',
    description:
      'Process an image (resize with fit modes, crop, rotate, thumbnail, convert between JPEG, PNG, WebP and AVIF, strip metadata) or audio/video ' +
      '(transcode to a preset, extract audio, trim, one frame as an image, resample, loudness normalisation). Input: a workspace path, a URL or base64 ' +
      `(caps: ${deps.config.MEDIA_MAX_INPUT_BYTES} bytes from the workspace, ${deps.config.MEDIA_MAX_URL_BYTES} from a URL, ${deps.config.MEDIA_MAX_BASE64_BYTES} base64; images up to ${deps.config.MEDIA_MAX_PIXELS} pixels). ` +
      `The output is written under the output folder (${deps.config.MEDIA_OUTPUT_DIR}), never over an existing file unless overwrite is true, and answered with its analysis. ` +
      `Audio/video longer than ${deps.config.MEDIA_JOB_THRESHOLD_SECONDS} s, or any call with async: true, answers a job at once (media_query follows it); ` +
      `jobs run ${deps.config.MEDIA_JOB_CONCURRENCY} at a time, ${deps.config.MEDIA_JOB_QUEUE_MAX} waiting at most, each within ${deps.config.MEDIA_JOB_TIMEOUT_MS} ms. ` +
      'Audio/video need ffmpeg (NOT_CONFIGURED without it).',
    // listed as one object (a model API refuses a top-level oneOf); validated per operation by processInput
    input: actionInput(processInput),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    // long work: MCP clients that declared the tasks extension get a task through the gateway
    execution: { taskSupport: 'optional' },
    handler: (args, ctx) => processMedia(deps, args, ctx),
  });
