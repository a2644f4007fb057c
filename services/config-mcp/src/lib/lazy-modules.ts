/* eslint-disable @typescript-eslint/no-require-imports */
import type Dotenv from 'dotenv';
import type * as SmolToml from 'smol-toml';
import type * as Yaml from 'yaml';

/**
 * The parsers of the formats other than JSON, each loaded by the first call that reads or writes
 * its format: yaml (0.8 MiB of heap, 72 files), dotenv (0.5 MiB) and smol-toml (0.1 MiB) are not
 * held by an idle service.
 */
let yamlModule: typeof Yaml | undefined;
export const yaml = (): typeof Yaml => (yamlModule ??= require('yaml') as typeof Yaml);

let tomlModule: typeof SmolToml | undefined;
export const toml = (): typeof SmolToml => (tomlModule ??= require('smol-toml') as typeof SmolToml);

let dotenvModule: typeof Dotenv | undefined;
export const dotenv = (): typeof Dotenv => (dotenvModule ??= require('dotenv') as typeof Dotenv);
