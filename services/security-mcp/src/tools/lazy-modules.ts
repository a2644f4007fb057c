/* eslint-disable @typescript-eslint/no-require-imports */
import { lazy } from '@mcp-fleet/kit';
import type Bcrypt from 'bcrypt';
import type * as Jose from 'jose';

/**
 * jose (1.4 MiB of heap, 83 files) and bcrypt (a native addon, 0.5 MiB), loaded by the first call
 * of a tool that uses them: the service's idle process holds neither.
 */
export const jose = lazy(() => require('jose') as typeof Jose);
export const bcrypt = lazy(() => require('bcrypt') as typeof Bcrypt);
