/** @mcp-fleet/git: git that trusts nothing in a repository (hardening.ts says how), shared by every service that runs git. */
export * from './env';
export * from './hardening';
export * from './patch';
export * from './repo';
export * from './sandboxed';
