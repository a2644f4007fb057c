/**
 * `pnpm new-service <id> [options]`: scaffolds a service on the kit in the one shape every service has
 * (docs/writing-a-service.md): the package, its config schema, app, server, one file per tool built by
 * `createTools(deps)`, a supertest test, its docs page and its inventory entry; then `pnpm gen` derives
 * compose, the Prometheus targets, the README table and docs/configuration.md from the inventory.
 *
 * A service the contract already lists (a `planned` inventory entry) keeps its port, tools and
 * description and is switched to `available`; a new id gets a new entry. Nothing is overwritten:
 * an existing package folder or docs page, a taken port or a bad name stops the command before any
 * file is written.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SERVICES, type AccessPattern, type ServiceEntry } from '@mcp-fleet/inventory';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

const SERVICE_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const PATTERNS: readonly AccessPattern[] = ['tool-oriented', 'route-oriented'];

export interface NewServiceOptions {
  id: string;
  port?: number;
  tools?: string[];
  description?: string;
  pattern?: AccessPattern;
}

export interface ScaffoldPlan {
  entry: ServiceEntry;
  /** The contract already listed this service: its entry is switched to available rather than added. */
  existing: boolean;
  files: Record<string, string>;
}

export class ScaffoldError extends Error {}

/** Checks the request against the inventory and the tree and returns every file to write; writes nothing. */
export function planService(options: NewServiceOptions, root = REPO_ROOT, services: readonly ServiceEntry[] = SERVICES): ScaffoldPlan {
  const { id } = options;
  if (!SERVICE_ID.test(id)) throw new ScaffoldError(`service id "${id}" must be lower-case words joined by "-", e.g. weather-mcp`);
  if (fs.existsSync(path.join(root, 'services', id)))
    throw new ScaffoldError(`services/${id} already exists; pick another id or remove the folder first`);
  if (fs.existsSync(path.join(root, 'docs', 'services', `${id}.md`)))
    throw new ScaffoldError(`docs/services/${id}.md already exists; pick another id or remove the page first`);
  const known = services.find((s) => s.id === id);
  if (known && known.status !== 'planned')
    throw new ScaffoldError(`${id} is already in the inventory with status "${known.status}"; only a planned entry can be scaffolded`);

  const port = options.port ?? known?.port;
  if (port === undefined)
    throw new ScaffoldError(`--port is required for a service the inventory does not list (free ports: ${freePorts(services)})`);
  if (!Number.isInteger(port) || port < 1024 || port > 65535)
    throw new ScaffoldError(`--port ${port} must be an integer from 1024 to 65535`);
  const portOwner = services.find((s) => s.port === port && s.id !== id);
  if (portOwner) throw new ScaffoldError(`port ${port} belongs to ${portOwner.id}; free ports near it: ${freePorts(services, port)}`);

  const tools = options.tools?.length
    ? options.tools
    : known?.tools.length
      ? known.tools
      : [`${id.replace(/-mcp$/, '').replace(/-/g, '_')}_echo`];
  const bad = tools.filter((t) => !TOOL_NAME.test(t));
  if (bad.length) throw new ScaffoldError(`tool names must be lower-case snake_case, at most 64 characters: ${bad.join(', ')}`);
  if (new Set(tools).size !== tools.length) throw new ScaffoldError(`tool names repeat: ${tools.join(', ')}`);

  const pattern = options.pattern ?? (known && PATTERNS.includes(known.pattern) ? known.pattern : 'tool-oriented');
  if (!PATTERNS.includes(pattern)) throw new ScaffoldError(`--pattern must be one of ${PATTERNS.join(', ')}`);
  const description = (options.description ?? known?.description ?? `${id}: describe what it does.`).trim();
  if (!description || /['\\\n]/.test(description)) throw new ScaffoldError('--description must be one line without quotes or backslashes');

  const entry: ServiceEntry = {
    id,
    port,
    pattern,
    description,
    tools,
    backends: known?.backends ?? [],
    status: 'available',
    http: true,
    storage: known?.storage ?? 'none',
  };
  return { entry, existing: Boolean(known), files: renderFiles(entry) };
}

/** Writes the plan: the package, the docs page and the inventory entry. Call `regenerate` afterwards. */
export function writeService(plan: ScaffoldPlan, root = REPO_ROOT): string[] {
  const written: string[] = [];
  for (const [rel, text] of Object.entries(plan.files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text, { flag: 'wx' });
    written.push(rel);
  }
  const inventory = path.join(root, 'packages/inventory/src/index.ts');
  fs.writeFileSync(inventory, withEntry(fs.readFileSync(inventory, 'utf8'), plan));
  written.push('packages/inventory/src/index.ts');
  return written;
}

/** The inventory source with the service's entry added, or its planned entry switched to available. */
export function withEntry(source: string, plan: ScaffoldPlan): string {
  const { entry } = plan;
  if (plan.existing) {
    const start = source.indexOf(`id: '${entry.id}',`);
    const status = source.indexOf("status: 'planned'", start);
    const next = source.indexOf('\n  },', start);
    if (start < 0 || status < 0 || status > next)
      throw new ScaffoldError(`could not find ${entry.id}'s planned entry in the inventory source`);
    return `${source.slice(0, status)}status: 'available'${source.slice(status + "status: 'planned'".length)}`;
  }
  const end = source.indexOf('\n];', source.indexOf('export const SERVICES'));
  if (end < 0) throw new ScaffoldError('could not find the end of SERVICES in the inventory source');
  const block = [
    '  {',
    `    id: '${entry.id}',`,
    `    port: ${entry.port},`,
    `    pattern: '${entry.pattern}',`,
    `    description: '${entry.description}',`,
    `    tools: [${entry.tools.map((t) => `'${t}'`).join(', ')}],`,
    '    backends: [],',
    "    status: 'available',",
    '    http: true,',
    "    storage: 'none',",
    '  },',
  ].join('\n');
  return `${source.slice(0, end)}\n${block}${source.slice(end)}`;
}

function freePorts(services: readonly ServiceEntry[], near = 7040): string {
  const taken = new Set(services.map((s) => s.port));
  const free: number[] = [];
  for (let p = near; free.length < 3 && p < 65535; p++) if (!taken.has(p)) free.push(p);
  return free.join(', ');
}

const pascal = (name: string) => name.replace(/(^|[_-])([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
const camel = (name: string) => pascal(name).replace(/^./, (c) => c.toLowerCase());
const kebab = (name: string) => name.replace(/_/g, '-');

function renderFiles(entry: ServiceEntry): Record<string, string> {
  const dir = `services/${entry.id}`;
  const files: Record<string, string> = {
    [`${dir}/package.json`]: `${JSON.stringify(
      {
        name: `@mcp-fleet/${entry.id}`,
        version: '0.1.0',
        private: true,
        main: 'src/app.ts',
        scripts: { start: 'tsx src/server.ts' },
        dependencies: {
          '@mcp-fleet/inventory': 'workspace:*',
          '@mcp-fleet/kit': 'workspace:*',
          express: 'catalog:',
          zod: 'catalog:',
        },
        devDependencies: { '@mcp-fleet/testing': 'workspace:*' },
      },
      null,
      2,
    )}\n`,
    [`${dir}/src/config.ts`]: `import { baseEnvShape, loadConfig, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = '${entry.id}';

/** The environment this service reads: the kit's base variables plus its own, each with \`.describe()\`. */
export const configSchema = z.object({ ...baseEnvShape });

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
`,
    [`${dir}/src/app.ts`]: `import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { SERVICE_ID, type Config } from './config';
import { createTools } from './tools';

export interface AppDeps {
  config: Config;
  logger: Logger;
}

/** Builds the app; never listens (server.ts does). */
export function createApp({ config, logger }: AppDeps): ServiceApp {
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ service: SERVICE_ID }),
  });
}
`,
    [`${dir}/src/server.ts`]: `import { bootService } from '@mcp-fleet/kit';
import { getService } from '@mcp-fleet/inventory';
import { createApp } from './app';
import { readConfig, SERVICE_ID } from './config';

void bootService({ service: SERVICE_ID, defaultPort: getService(SERVICE_ID)!.port, readConfig, createApp });
`,
    [`${dir}/src/tools/context.ts`]: `/** What the tools need: engines, stores and caps, built once in app.ts (a leaf: tools import it, not index.ts). */
export interface ToolDeps {
  service: string;
}
`,
    [`${dir}/src/tools/index.ts`]: `import type { ToolDefinition } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';
${entry.tools.map((t) => `import { ${camel(t)}Tool } from './${kebab(t)}';`).join('\n')}

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [${entry.tools.map((t) => `${camel(t)}Tool(deps)`).join(', ')}];
}
`,
    [`${dir}/test/tools.test.ts`]: `import request from 'supertest';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const config = configSchema.parse({ ...testConfig, DATA_DIR: '/tmp' });
const { app } = createApp({ config, logger: testLogger() });

describe('${entry.id}', () => {
  it('lists its tools with JSON Schemas generated from zod', async () => {
    const res = await request(app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(${JSON.stringify([...entry.tools].sort())});
    for (const tool of res.body.tools) expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
  });

${entry.tools
  .map(
    (t) => `  it('answers ${t} with the envelope, and refuses bad input with VALIDATION_ERROR', async () => {
    const ok = await request(app).post('/tools/${t}').send({ message: 'hello' }).expect(200);
    expect(ok.body).toMatchObject({ success: true, service: '${entry.id}', result: { tool: '${t}', message: 'hello' } });
    const bad = await request(app).post('/tools/${t}').send({ message: 42 }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
`,
  )
  .join('\n')}});
`,
    [`docs/services/${entry.id}.md`]: `# ${entry.id} (${entry.port})

${entry.description}

Scaffolded by \`pnpm new-service\` (or \`scripts/install-mcp.sh\`). Each tool below starts as an echo of
its input; replace its schema and handler with the real work, then this page with what it does.

## Tools

${entry.tools.map((t) => `- \`${t}\`: echoes \`message\` back (scaffold).`).join('\n')}

## Configuration

The kit's base variables only (see docs/configuration.md); add the service's own to \`src/config.ts\`
with \`.describe()\` on each and run \`pnpm gen\`.
`,
  };
  for (const t of entry.tools) {
    files[`${dir}/src/tools/${kebab(t)}.ts`] = `import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';

// Scaffold: replace the schema and the handler with the tool's real work.
export const ${camel(t)}Tool = (deps: ToolDeps) =>
  defineTool({
    name: '${t}',
    title: '${pascal(t).replace(/([a-z0-9])([A-Z])/g, '$1 $2')}',
    description: 'Echoes the message back. Message up to 1,000 characters.',
    input: z
      .object({
        message: z.string().max(1000).describe('Text to echo back, up to 1,000 characters.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: ({ message }) => ({ tool: '${t}', service: deps.service, message }),
  });
`;
  }
  return files;
}

/** Links the new package and runs `pnpm gen` (compose, Prometheus, README, configuration docs). */
export function regenerate(written: string[], root = REPO_ROOT, install = true): void {
  const run = (cmd: string, args: string[]) => {
    const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (res.status !== 0) throw new ScaffoldError(`${cmd} ${args.join(' ')} failed (exit ${res.status}); fix the cause and run it again`);
  };
  run('pnpm', ['exec', 'prettier', '--log-level', 'warn', '--write', ...written]);
  // the configuration docs import the new service's config, so the package is linked first
  if (!install) return;
  run('pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile']);
  run(process.execPath, ['--import', 'tsx', 'scripts/gen/generate.ts']);
}

const USAGE = `Usage: pnpm new-service <id> [--port N] [--tools a,b] [--description TEXT] [--pattern tool-oriented|route-oriented] [--no-install]

Scaffolds services/<id> on the kit (config, app, server, one file per tool, a test), docs/services/<id>.md
and its inventory entry, then runs \`pnpm gen\` and links the package. A service the inventory already
plans keeps its port, tools and description. Nothing existing is overwritten.`;

function main(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        tools: { type: 'string' },
        description: { type: 'string' },
        pattern: { type: 'string' },
        'no-install': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`new-service: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`new-service: give exactly one service id\n${USAGE}\n`);
    return 2;
  }
  try {
    const plan = planService({
      id: positionals[0],
      port: values.port === undefined ? undefined : Number(values.port),
      tools: values.tools
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      description: values.description,
      pattern: values.pattern as AccessPattern | undefined,
    });
    const written = writeService(plan);
    for (const file of written) process.stdout.write(`wrote ${file}\n`);
    regenerate(written, REPO_ROOT, !values['no-install']);
    if (values['no-install']) process.stdout.write('\nNot linked: run pnpm install && pnpm gen before testing it.\n');
    process.stdout.write(
      `\n${plan.entry.id} (${plan.entry.port}) is ${plan.existing ? 'switched to available' : 'added'} in the inventory.\n` +
        `Next: pnpm exec jest services/${plan.entry.id} test/static, then give its tools their real work.\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof ScaffoldError) {
      process.stderr.write(`new-service: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
