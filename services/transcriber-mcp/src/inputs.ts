import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import type { Workspace } from '@mcp-fleet/kit/workspace';
import type { OutboundClient } from '@mcp-fleet/outbound';

export interface InputDeps {
  ws: Workspace;
  outbound: OutboundClient;
  scratchDir: string;
  maxUploadBytes: number;
  maxUrlBytes: number;
  urlTimeoutMs: number;
}

/** A local file holding the caller's audio; release() removes a scratch copy. */
export interface AudioInput {
  file: string;
  /** What the caller named, for answers and errors ("base64", the relative path, the URL). */
  source: string;
  bytes: number;
  release: () => Promise<void>;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const tooLarge = (what: string, cap: number, variable: string) =>
  new AppError('PAYLOAD_TOO_LARGE', `${what} is larger than ${cap} bytes (${variable}); send shorter or more compressed audio.`);

const empty = (field: string) =>
  new AppError('VALIDATION_ERROR', `The audio in ${field} is empty (0 bytes); send an audio file.`, {
    details: [{ path: field, message: 'zero bytes' }],
  });

async function scratch(deps: InputDeps, data: Buffer, source: string): Promise<AudioInput> {
  await fs.mkdir(deps.scratchDir, { recursive: true, mode: 0o700 });
  const file = path.join(deps.scratchDir, `in-${randomBytes(8).toString('hex')}`);
  await fs.writeFile(file, data, { flag: 'wx', mode: 0o600 });
  return { file, source, bytes: data.length, release: () => fs.rm(file, { force: true }) };
}

/** A file inside the workspace roots, under the upload cap. */
export async function fromWorkspace(deps: InputDeps, filePath: string): Promise<AudioInput> {
  const resolved = await deps.ws.resolve(filePath, { mustExist: true, field: 'file_path' });
  const st = await fs.stat(resolved.absolute);
  if (!st.isFile()) {
    throw new AppError('VALIDATION_ERROR', `file_path "${filePath}" is not a regular file.`, {
      details: [{ path: 'file_path', message: 'not a file' }],
    });
  }
  if (st.size > deps.maxUploadBytes) throw tooLarge(`file_path "${filePath}"`, deps.maxUploadBytes, 'TRANSCRIBE_MAX_UPLOAD_BYTES');
  if (st.size === 0) throw empty('file_path');
  return { file: resolved.absolute, source: resolved.relative, bytes: st.size, release: async () => undefined };
}

/** Base64 text (standard or URL-safe alphabet, whitespace ignored), under the upload cap. */
export async function fromBase64(deps: InputDeps, base64: string): Promise<AudioInput> {
  const text = base64.replace(/\s+/g, '');
  if (!BASE64.test(text)) {
    throw new AppError('VALIDATION_ERROR', 'audio_base64 is not valid base64 text.', {
      details: [{ path: 'audio_base64', message: 'not base64' }],
    });
  }
  if (Math.floor((text.length * 3) / 4) > deps.maxUploadBytes + 3) {
    throw tooLarge('audio_base64', deps.maxUploadBytes, 'TRANSCRIBE_MAX_UPLOAD_BYTES');
  }
  const data = Buffer.from(text, 'base64');
  if (data.length > deps.maxUploadBytes) throw tooLarge('audio_base64', deps.maxUploadBytes, 'TRANSCRIBE_MAX_UPLOAD_BYTES');
  if (data.length === 0) throw empty('audio_base64');
  return scratch(deps, data, 'upload');
}

/** An http(s) URL through the outbound client: private addresses refused, redirects checked, body capped. */
export async function fromUrl(deps: InputDeps, url: string, signal?: AbortSignal): Promise<AudioInput> {
  const cap = deps.maxUrlBytes;
  const res = await deps.outbound.request(url, { maxResponseBytes: cap + 1, timeoutMs: deps.urlTimeoutMs, signal });
  if (res.status < 200 || res.status > 299) {
    throw new AppError('UPSTREAM_ERROR', `Fetching the url answered HTTP ${res.status}; check the address.`, {
      details: { status: res.status },
    });
  }
  if (res.truncated || res.body.length > cap) throw tooLarge('The url body', cap, 'TRANSCRIBE_MAX_URL_BYTES');
  if (res.body.length === 0) throw empty('url');
  return scratch(deps, res.body, url);
}
