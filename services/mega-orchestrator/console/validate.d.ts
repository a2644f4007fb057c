// Types of validate.js for the tests that import it (the browser loads the .js as it is).
export interface Problem {
  path: string;
  message: string;
}
export function validate(schema: unknown, value: unknown, root?: unknown, path?: string, depth?: number): Problem[];
export function resolveRef(root: unknown, schema: unknown): Record<string, unknown>;
export const pathText: (path: string) => string;
export const childPath: (path: string, key: string | number) => string;
