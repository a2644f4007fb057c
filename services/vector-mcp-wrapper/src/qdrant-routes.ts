import express, { type Express, type Request, type Response } from 'express';
import { AppError, parseOrThrow, toAppError, type KitHandle } from '@mcp-fleet/kit';
import { collectionNameSchema, filterSchema, vectorSchema, type VectorStore } from '@mcp-fleet/vector-store';
import { z } from 'zod';

/**
 * The reference's direct interface, answered as Qdrant answers (so its old clients work unchanged):
 *   GET  /collections/{name}                -> {result: {status, points_count, config: {params: {vectors: {size, distance}}}}, status: "ok", time}
 *   POST /collections/{name}/points/search  -> {result: [{id, version, score, payload, vector}], status: "ok", time}
 * Errors as Qdrant writes them, {status: {error}, time}, with the fleet's HTTP status for the code.
 */
const searchBody = z.object({
  vector: vectorSchema,
  limit: z.number().int().min(1).max(1000).default(10).describe('Results to return.'),
  filter: filterSchema.optional(),
  score_threshold: z.number().optional().describe('Cosine/Dot: minimum score; Euclid: maximum distance.'),
  with_payload: z.boolean().default(true).describe('Return each point payload.'),
  with_vector: z.boolean().default(false).describe('Return each point vector.'),
});

function collectionName(req: Request): string {
  return parseOrThrow(z.object({ name: collectionNameSchema }), { name: String(req.params.name) }, 'collection name').name;
}

export function registerQdrantRoutes(app: Express, kit: KitHandle, store: VectorStore, bodyLimit: string): void {
  const send = async (res: Response, work: () => Promise<unknown>) => {
    const started = performance.now();
    const time = () => Number(((performance.now() - started) / 1000).toFixed(6));
    try {
      const result = await work();
      res.json({ result, status: 'ok', time: time() });
    } catch (err) {
      const e = toAppError(err);
      if (e.status >= 500) kit.logger.error(e.message, { code: e.code, err: e.cause ?? e });
      res.status(e.status).json({ status: { error: e.message }, time: time() });
    }
  };

  app.get('/collections/:name', (req, res) =>
    send(res, async () => {
      const info = await store.collectionInfo(collectionName(req));
      return {
        status: 'green',
        optimizer_status: 'ok',
        points_count: info.pointsCount,
        indexed_vectors_count: info.pointsCount,
        segments_count: 1,
        config: { params: { vectors: { size: info.size, distance: info.distance } } },
        payload_schema: {},
      };
    }),
  );

  const json = express.json({ limit: bodyLimit });
  app.post('/collections/:name/points/search', (req, res) =>
    send(res, async () => {
      await new Promise<void>((resolve, reject) => json(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
      const collection = collectionName(req);
      if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) {
        throw new AppError('VALIDATION_ERROR', 'Send a JSON object {"vector": [...], "limit": N}.');
      }
      const body = parseOrThrow(searchBody, req.body, 'search request');
      const hits = await store.search(collection, {
        vector: body.vector,
        limit: Math.min(body.limit, store.limits.maxPointsPerCall),
        filter: body.filter,
        scoreThreshold: body.score_threshold,
        withPayload: body.with_payload,
        withVectors: body.with_vector,
      });
      return hits.map((h) => ({
        id: h.id,
        version: 0,
        score: h.score,
        payload: body.with_payload ? (h.payload ?? {}) : null,
        vector: body.with_vector ? (h.vector ?? null) : null,
      }));
    }),
  );
}
