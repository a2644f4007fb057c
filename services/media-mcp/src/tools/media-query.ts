import { actionInput, AppError, pageShape, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { MediaDeps } from '../deps';
import { JOB_STATES } from '../jobs';

const jobId = z.string().min(1).max(64).describe('The job id media_process answered.');

export const queryInput = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('get').describe('One job: state, percent, outputs (with their analysis) and error.'),
      jobId,
    })
    .strict(),
  z
    .object({
      action: z.literal('list').describe('Jobs, newest first, with cursor paging.'),
      state: z.enum(JOB_STATES).optional().describe('Only jobs in this state.'),
      ...pageShape,
    })
    .strict(),
  z
    .object({
      action: z.literal('cancel').describe('Cancel a queued or running job: its ffmpeg is killed and the partial output removed.'),
      jobId,
    })
    .strict(),
]);

export const mediaQueryTool = (deps: MediaDeps) =>
  defineTool({
    name: 'media_query',
    title: 'Query media jobs',
    description:
      'Follow the jobs media_process started: "get" one job (state queued/running/succeeded/failed/cancelled/interrupted, percent from ffmpeg progress, outputs with their analysis, error), ' +
      '"list" jobs newest first (limit up to 500, nextCursor), or "cancel" one (CONFLICT when it has already ended). Job records survive a restart; a job running at the time is marked interrupted.',
    // listed as one object (a model API refuses a top-level oneOf); validated per action by queryInput
    input: actionInput(queryInput),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      const store = deps.runner.store;
      if (args.action === 'list') return store.list(args);
      if (args.action === 'cancel') return deps.runner.cancel(args.jobId);
      const job = await store.get(args.jobId);
      if (!job) throw new AppError('NOT_FOUND', `No job ${args.jobId}; media_query with action "list" shows the jobs.`);
      return job;
    },
  });
