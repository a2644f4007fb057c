/* eslint-disable @typescript-eslint/no-require-imports */
import { lazy } from '@mcp-fleet/kit';
import type Dotenv from 'dotenv';
import type * as SmolToml from 'smol-toml';
import type * as Yaml from 'yaml';

/**
 * The parsers of the formats other than JSON, each loaded by the first call that reads or writes
 * its format: yaml (0.8 MiB of heap, 72 files), dotenv (0.5 MiB) and smol-toml (0.1 MiB) are not
 * held by an idle service.
 */
export const yaml = lazy(() => require('yaml') as typeof Yaml);
export const toml = lazy(() => require('smol-toml') as typeof SmolToml);
export const dotenv = lazy(() => require('dotenv') as typeof Dotenv);
