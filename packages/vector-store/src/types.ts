import type { PointId } from './ids';

export type Distance = 'Cosine' | 'Euclid' | 'Dot';
export const DISTANCES: readonly Distance[] = ['Cosine', 'Euclid', 'Dot'];

export type Payload = Record<string, unknown>;

export type MatchValue = string | number | boolean;

export interface FieldCondition {
  /** Payload key; dots descend into objects, `name[]` descends into every element of an array. */
  key: string;
  match?: { value: MatchValue } | { any: string[] | number[] };
  range?: { gt?: number; gte?: number; lt?: number; lte?: number };
}

export interface HasIdCondition {
  has_id: PointId[];
}

export type Condition = FieldCondition | HasIdCondition | Filter;

/** The subset of Qdrant's filter language both implementations evaluate identically. */
export interface Filter {
  must?: Condition[];
  should?: Condition[];
  must_not?: Condition[];
}

export interface CollectionSpec {
  name: string;
  /** Vector dimensions, 1..4096. */
  size: number;
  distance: Distance;
}

export interface CollectionInfo extends CollectionSpec {
  pointsCount: number;
}

export interface PointInput {
  id: PointId;
  vector: number[];
  payload?: Payload;
}

export interface PointUpdate {
  id: PointId;
  /** Replaces the stored vector. */
  vector?: number[];
  /** Merged into (payloadMode "merge") or replaces (payloadMode "replace") the stored payload. */
  payload?: Payload;
}

export interface StoredPoint {
  id: PointId;
  payload?: Payload;
  vector?: number[];
}

export interface ScoredPoint extends StoredPoint {
  /** Cosine and Dot: similarity, higher is better. Euclid: distance, lower is better. */
  score: number;
}

export interface SearchRequest {
  vector: number[];
  limit?: number;
  filter?: Filter;
  /** Cosine/Dot: keep score >= threshold. Euclid: keep distance <= threshold. */
  scoreThreshold?: number;
  withPayload?: boolean;
  withVectors?: boolean;
}

export interface ScrollRequest {
  filter?: Filter;
  limit?: number;
  /** Start at this id (inclusive): the `nextOffset` of the previous page. */
  offset?: PointId;
  withPayload?: boolean;
  withVectors?: boolean;
}

export interface ScrollPage {
  points: StoredPoint[];
  nextOffset?: PointId;
}

export interface FetchOptions {
  withPayload?: boolean;
  withVectors?: boolean;
}

export type DeleteSelector = { ids: PointId[] } | { filter: Filter };

export interface VectorStoreLimits {
  /** Points per upsert/update/delete/fetch call. */
  maxPointsPerCall: number;
  /** Serialised JSON size of one payload, in bytes. */
  maxPayloadBytes: number;
  /** Results per search. */
  maxSearchLimit: number;
  /** Points per scroll page. */
  maxScrollLimit: number;
  /** Conditions in one filter (all levels). */
  maxFilterConditions: number;
}

export const DEFAULT_LIMITS: VectorStoreLimits = {
  maxPointsPerCall: 1000,
  maxPayloadBytes: 64 * 1024,
  maxSearchLimit: 1000,
  maxScrollLimit: 10_000,
  maxFilterConditions: 256,
};

/** One interface over the embedded store and Qdrant; both throw AppError with the same codes. */
export interface VectorStore {
  readonly kind: 'embedded' | 'qdrant';
  readonly limits: VectorStoreLimits;
  createCollection(spec: CollectionSpec): Promise<CollectionInfo>;
  /** False when there was no such collection. */
  deleteCollection(name: string): Promise<boolean>;
  listCollections(): Promise<string[]>;
  /** NOT_FOUND when the collection does not exist. */
  collectionInfo(name: string): Promise<CollectionInfo>;
  hasCollection(name: string): Promise<boolean>;
  upsert(collection: string, points: PointInput[]): Promise<{ upserted: number }>;
  update(collection: string, points: PointUpdate[], options?: { payloadMode?: 'merge' | 'replace' }): Promise<{ updated: number }>;
  delete(collection: string, selector: DeleteSelector): Promise<{ deleted: number }>;
  fetch(collection: string, ids: PointId[], options?: FetchOptions): Promise<StoredPoint[]>;
  search(collection: string, request: SearchRequest): Promise<ScoredPoint[]>;
  scroll(collection: string, request?: ScrollRequest): Promise<ScrollPage>;
  count(collection: string, filter?: Filter): Promise<number>;
  /** Reachability and a one-line summary, for /health. */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}
