import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { type Workspace } from '@mcp-fleet/kit/workspace';
import type { OutboundClient } from '@mcp-fleet/outbound';
import { z } from 'zod';

/** The three ways to name an input; exactly one is given. */
export const sourceShape = {
  path: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('A file inside the workspace roots (relative paths resolve against the first root).'),
  url: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'An http(s) URL fetched through the outbound client (private and loopback addresses refused unless allowlisted; redirects checked hop by hop; MEDIA_MAX_URL_BYTES cap).',
    ),
  base64: z.string().min(1).optional().describe('The file itself, base64-encoded (MEDIA_MAX_BASE64_BYTES decoded cap).'),
  filename: z
    .string()
    .max(255)
    .optional()
    .describe('A name for url or base64 input (its extension helps format detection and names outputs).'),
};

export interface SourceArgs {
  path?: string;
  url?: string;
  base64?: string;
  filename?: string;
}

/** zod check shared by the tools: exactly one of path, url and base64. */
export function exactlyOneSource(args: SourceArgs, ctx: z.RefinementCtx): void {
  const given = (['path', 'url', 'base64'] as const).filter((k) => args[k] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: given.length ? [given[1]] : ['path'],
      message: given.length ? `give only one of path, url and base64 (got ${given.join(', ')})` : 'give one of path, url or base64',
    });
  }
}

export interface InputDeps {
  ws: Workspace;
  outbound: OutboundClient;
  scratchDir: string;
  limits: { maxInputBytes: number; maxUrlBytes: number; maxBase64Bytes: number; urlTimeoutMs: number };
}

export interface LocalInput {
  /** A readable local file: the workspace file itself, or a scratch copy of fetched/decoded bytes. */
  file: string;
  /** What the caller named, for answers (the relative path, the URL, or "base64"). */
  source: string;
  /** Base name used for output names. */
  name: string;
  bytes: number;
  /** Removes the scratch copy (no-op for a workspace file). */
  release: () => Promise<void>;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function tooLarge(what: string, cap: number, variable: string): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `${what} is larger than ${cap} bytes (${variable}); send a smaller file.`);
}

function emptyInput(source: string): AppError {
  return new AppError('VALIDATION_ERROR', `The input ${source} is empty (0 bytes); send a media file.`, {
    details: [{ path: 'input', message: 'zero bytes' }],
  });
}

function safeName(name: string | undefined, fallback: string): string {
  const base = path
    .basename(name ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '');
  return base.slice(-120) || fallback;
}

async function writeScratch(deps: InputDeps, name: string, data: Buffer): Promise<string> {
  await fs.mkdir(deps.scratchDir, { recursive: true });
  const file = path.join(deps.scratchDir, `${randomBytes(8).toString('hex')}-${name}`);
  await fs.writeFile(file, data, { flag: 'wx', mode: 0o600 });
  return file;
}

/** Resolves the caller's input to a local file under the size caps; callers release() it when done. */
export async function openInput(deps: InputDeps, args: SourceArgs, signal?: AbortSignal): Promise<LocalInput> {
  if (args.path !== undefined) {
    const resolved = await deps.ws.resolve(args.path, { mustExist: true, field: 'path' });
    const st = await fs.stat(resolved.absolute);
    if (!st.isFile()) {
      throw new AppError('VALIDATION_ERROR', `path "${args.path}" is not a regular file.`, {
        details: [{ path: 'path', message: 'not a file' }],
      });
    }
    if (st.size > deps.limits.maxInputBytes) throw tooLarge(`path "${args.path}"`, deps.limits.maxInputBytes, 'MEDIA_MAX_INPUT_BYTES');
    if (st.size === 0) throw emptyInput(`"${args.path}"`);
    return {
      file: resolved.absolute,
      source: resolved.relative,
      name: path.basename(resolved.absolute),
      bytes: st.size,
      release: async () => undefined,
    };
  }
  let data: Buffer;
  let source: string;
  let name: string;
  if (args.url !== undefined) {
    const cap = deps.limits.maxUrlBytes;
    const res = await deps.outbound.request(args.url, { maxResponseBytes: cap + 1, timeoutMs: deps.limits.urlTimeoutMs, signal });
    if (res.status < 200 || res.status > 299) {
      throw new AppError('UPSTREAM_ERROR', `Fetching the url answered HTTP ${res.status}; check the address.`, {
        details: { status: res.status },
      });
    }
    if (res.truncated || res.body.length > cap) throw tooLarge('The url body', cap, 'MEDIA_MAX_URL_BYTES');
    data = res.body;
    source = args.url;
    name = safeName(args.filename ?? new URL(res.url).pathname, 'download');
  } else {
    const text = (args.base64 ?? '').replace(/\s+/g, '');
    if (!BASE64.test(text)) {
      throw new AppError('VALIDATION_ERROR', 'base64 is not valid base64 text.', { details: [{ path: 'base64', message: 'not base64' }] });
    }
    if (Math.floor((text.length * 3) / 4) > deps.limits.maxBase64Bytes + 3) {
      throw tooLarge('The base64 input', deps.limits.maxBase64Bytes, 'MEDIA_MAX_BASE64_BYTES');
    }
    data = Buffer.from(text, 'base64');
    if (data.length > deps.limits.maxBase64Bytes) throw tooLarge('The base64 input', deps.limits.maxBase64Bytes, 'MEDIA_MAX_BASE64_BYTES');
    source = 'base64';
    name = safeName(args.filename, 'input');
  }
  if (data.length === 0) throw emptyInput(source === 'base64' ? 'base64' : 'from the url');
  const file = await writeScratch(deps, name, data);
  return { file, source, name, bytes: data.length, release: () => fs.rm(file, { force: true }) };
}
