/**
 * Built to dist/fleet/check.js: exits 0 when the build is current, 1 when it is stale (silently;
 * `./fleet build --check` says why). ./fleet runs it before the built launcher, so a current build
 * costs a plain node start (0.2 s, 0.17 CPU-seconds) rather than loading tsx (0.8 s, 0.66), and
 * rebuilds through tsx only when something changed, the launcher's own source included.
 */
import { staleReason } from './stamp';

process.exitCode = staleReason() ? 1 : 0;
