/** @mcp-fleet/sandbox: the OS sandbox around every program the fleet starts, and the one runner that runs a program in it to its end. */
export * from './sandbox';
export * from './run';
