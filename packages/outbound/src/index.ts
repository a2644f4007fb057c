export * from './client';
export * from './ip';
export * from './policy';
export * from './tls';
