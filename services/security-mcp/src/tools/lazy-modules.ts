/* eslint-disable @typescript-eslint/no-require-imports */
import type Bcrypt from 'bcrypt';
import type * as Jose from 'jose';

/**
 * jose (1.4 MiB of heap, 83 files) and bcrypt (a native addon, 0.5 MiB), loaded by the first call
 * of a tool that uses them: the service's idle process holds neither.
 */
let joseModule: typeof Jose | undefined;
export const jose = (): typeof Jose => (joseModule ??= require('jose') as typeof Jose);

let bcryptModule: typeof Bcrypt | undefined;
export const bcrypt = (): typeof Bcrypt => (bcryptModule ??= require('bcrypt') as typeof Bcrypt);
