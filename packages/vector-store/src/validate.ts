import { AppError, parseOrThrow } from '@mcp-fleet/kit';
import { parsePointId, type PointId } from './ids';
import { collectionNameSchema, distanceSchema, exceedsDepth, filterSchema, MAX_DIMENSIONS, MAX_PAYLOAD_DEPTH } from './schemas';
import { normaliseFilter } from './filter';
import type { CollectionSpec, Distance, Filter, Payload, VectorStoreLimits } from './types';

const FLOAT32_MAX = 3.4028234663852886e38;

export function checkCollectionName(name: unknown): string {
  return parseOrThrow(collectionNameSchema, name, 'collection name');
}

export function checkSpec(spec: CollectionSpec): CollectionSpec {
  const name = checkCollectionName(spec?.name);
  const size = spec?.size;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_DIMENSIONS) {
    throw new AppError('VALIDATION_ERROR', `Collection size must be an integer from 1 to ${MAX_DIMENSIONS} (got ${String(size)}).`, {
      details: [{ path: 'size', message: `1..${MAX_DIMENSIONS}` }],
    });
  }
  const distance: Distance = parseOrThrow(distanceSchema, spec.distance, 'distance');
  return { name, size, distance };
}

/**
 * A vector as Float32Array after checking length and values; Cosine vectors are normalised here
 * (as Qdrant does), so stored and returned vectors agree between the two implementations.
 */
export function checkVector(vector: unknown, size: number, collection: string, path: string): Float32Array {
  if (!Array.isArray(vector)) {
    throw new AppError('VALIDATION_ERROR', `${path} must be an array of ${size} numbers for collection "${collection}".`, {
      details: [{ path, message: 'expected an array of numbers' }],
    });
  }
  if (vector.length !== size) {
    throw new AppError(
      'VALIDATION_ERROR',
      `${path} has ${vector.length} dimensions but collection "${collection}" expects ${size}; send vectors of exactly ${size} numbers.`,
      { details: [{ path, message: `expected ${size} dimensions, got ${vector.length}`, expected: size, received: vector.length }] },
    );
  }
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const v = vector[i];
    if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > FLOAT32_MAX) {
      throw new AppError(
        'VALIDATION_ERROR',
        `${path}[${i}] is ${typeof v === 'number' ? String(v) : JSON.stringify(v)?.slice(0, 40)}; components must be finite numbers within the float32 range (±3.4e38).`,
        { details: [{ path: `${path}.${i}`, message: 'not a finite float32 number' }] },
      );
    }
    out[i] = v;
  }
  return out;
}

export function normalise(v: Float32Array): void {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (sum === 0) return;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
}

/** A clean JSON copy of the payload, plus its serialised form; refuses non-objects, deep and oversized payloads. */
export function checkPayload(payload: unknown, limits: VectorStoreLimits, path: string): { json: string; value: Payload } {
  if (payload === undefined) return { json: '{}', value: {} };
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new AppError('VALIDATION_ERROR', `${path} must be a JSON object.`, { details: [{ path, message: 'expected an object' }] });
  }
  if (exceedsDepth(payload, MAX_PAYLOAD_DEPTH)) {
    throw new AppError('VALIDATION_ERROR', `${path} nests deeper than ${MAX_PAYLOAD_DEPTH} levels; flatten it.`, {
      details: [{ path, message: 'too deep' }],
    });
  }
  const json = JSON.stringify(payload);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxPayloadBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `${path} is ${bytes} bytes as JSON; the limit is ${limits.maxPayloadBytes} bytes per point. Store large documents elsewhere and keep a reference.`,
      { details: [{ path, message: `${bytes} > ${limits.maxPayloadBytes} bytes` }] },
    );
  }
  return { json, value: JSON.parse(json) as Payload };
}

export function checkIds(ids: unknown, limits: VectorStoreLimits, path = 'ids'): PointId[] {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new AppError('VALIDATION_ERROR', `${path} must be a non-empty array of point ids.`, {
      details: [{ path, message: 'non-empty array' }],
    });
  }
  checkCount(ids.length, limits, path);
  return ids.map((id, i) => parsePointId(id, `${path}.${i}`));
}

export function checkCount(n: number, limits: VectorStoreLimits, path: string): void {
  if (n > limits.maxPointsPerCall) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `${n} items in ${path}; at most ${limits.maxPointsPerCall} per call. Split the request into batches.`,
      { details: [{ path, message: `at most ${limits.maxPointsPerCall}` }] },
    );
  }
}

export function checkFilter(filter: unknown): Filter | undefined {
  if (filter === undefined || filter === null) return undefined;
  return normaliseFilter(parseOrThrow(filterSchema, filter, 'filter'));
}

export function checkLimit(limit: unknown, max: number, fallback: number, path = 'limit'): number {
  if (limit === undefined) return fallback;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new AppError('VALIDATION_ERROR', `${path} must be an integer from 1 to ${max}.`, { details: [{ path, message: `1..${max}` }] });
  }
  return limit;
}

export function checkThreshold(t: unknown): number | undefined {
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'number' || !Number.isFinite(t)) {
    throw new AppError('VALIDATION_ERROR', 'scoreThreshold must be a finite number.', {
      details: [{ path: 'scoreThreshold', message: 'finite number' }],
    });
  }
  return t;
}

export function notFound(collection: string): AppError {
  return new AppError('NOT_FOUND', `Collection "${collection}" does not exist; create it first or list collections to see the names.`, {
    details: [{ path: 'collection', message: 'unknown collection' }],
  });
}

export function conflict(collection: string): AppError {
  return new AppError('CONFLICT', `Collection "${collection}" already exists; delete it first or use another name.`, {
    details: [{ path: 'name', message: 'already exists' }],
  });
}

/** Shortest decimal that reads back as the same float32, so vectors print as 0.1, not 0.10000000149011612. */
export function float32ToNumber(x: number): number {
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(x.toPrecision(p));
    if (Math.fround(candidate) === x) return candidate;
  }
  return x;
}
