import { z } from 'zod';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export const urlField = z
  .string()
  .min(1)
  .max(2048)
  .describe('Absolute http:// or https:// URL; private and loopback addresses are refused unless allowlisted.');

export const headersField = z
  .record(z.string().min(1).max(256), z.string().max(8192))
  .refine((h) => Object.keys(h).length <= 50, 'at most 50 headers')
  .optional()
  .describe('Request headers (at most 50). Host, Connection, Content-Length and Transfer-Encoding are set by the client.');
