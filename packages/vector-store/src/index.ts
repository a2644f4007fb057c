export * from './embedded';
export * from './filter';
export * from './ids';
export * from './open';
export * from './qdrant';
export * from './schemas';
export * from './types';
export { checkVector, float32ToNumber, normalise } from './validate';
