/**
 * Every tool service's Node flags, chosen for an idle process over a busy one (measured with
 * `pnpm bench footprint-flags`; the figures are in docs/operations.md, "The build and the footprint"):
 * - `--max-semi-space-size=1`: V8's young generation capped at 1 MiB per semi-space (Node's default
 *   grows it to 16 MiB): an idle service polled by the gateway every few seconds never shrinks it
 *   back, so each held 8-30 MiB of it for nothing;
 * - `--optimize-for-size`: V8 favours memory over speed (a smaller heap kept, pages given back
 *   sooner, less inlining); the optimizing compilers stay, so a service whose calls run hot loops
 *   of JavaScript keeps its speed;
 * - `--single-threaded`: V8 does its garbage collection and optimizing compilation on the main
 *   thread, with no background tasks: 34 MiB less anonymous memory over the fleet's tool services
 *   (1.4 MiB each), and no measurable change in a tool call's first or warm latency (filesystem-mcp,
 *   code-graph-mcp, advanced-memory-mcp, security-mcp, interleaved starts).
 * Not `--lite-mode` (4-5 MiB less again per process): it turns WebAssembly off, which Node's own
 * fetch (undici's llhttp) and tree-sitter need; the launcher could not start with it.
 *
 * The launcher starts every tool service with them (scripts/fleet/plan.ts), the gateway its stdio
 * servers of the inventory (toolkit-mcp-server), and the image (docker/Dockerfile) its service,
 * except a service on the agents' hot path (HOT_PATH_NODE_ARGS).
 */
export const SERVICE_NODE_ARGS: readonly string[] = ['--max-semi-space-size=1', '--optimize-for-size', '--single-threaded'];

/**
 * The flags of a tool service on the agents' hot path (the inventory's `hotPath`: filesystem-mcp,
 * which nearly every agent session lists and reads through): busy rather than idle, so speed over
 * memory. Not `--optimize-for-size` (less inlining: filesystem-mcp spent 5-9 % more CPU per file_list
 * call with it), a 2 MiB young generation (with both changes 9-13 % less CPU per call than the
 * idle flags), still `--single-threaded` (GC helper threads cost CPU that three busy processes on
 * two cores do not have). Measured with both flag sets under the same load at the same time
 * (`BENCH_AB_NODE_ARGS=... BENCH_AB_BASE=dist pnpm bench build-ab`, its "together" rounds); the
 * service's anonymous memory 30 s after the load was the same either way (docs/operations.md).
 */
export const HOT_PATH_NODE_ARGS: readonly string[] = ['--max-semi-space-size=2', '--single-threaded'];
