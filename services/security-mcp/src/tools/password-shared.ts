import { z } from 'zod';

/** bcrypt reads at most 72 bytes and stops at a NUL byte, so longer or NUL-holding passwords are refused, not silently cut. */
export const passwordField = z
  .string()
  .min(1)
  .refine((p) => Buffer.byteLength(p, 'utf8') <= 72, 'at most 72 bytes in UTF-8 (bcrypt ignores anything longer)')
  .refine((p) => !p.includes('\0'), 'must not contain a NUL byte (bcrypt stops reading there)');

export const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;
