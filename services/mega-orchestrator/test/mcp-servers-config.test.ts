/** MCP_SERVERS_FILE / MCP_SERVERS: the mcpServers shape, ${VAR} expansion, and every bad entry named. */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '@mcp-fleet/kit';
import { tempDir } from '@mcp-fleet/testing';
import { configuredMcpServers, inventoryStdioServers } from '../src/downstream/mcp-servers-config';
import { readConfig } from '../src/core/config';

describe('MCP server configuration', () => {
  const tmp = tempDir('mcp-fleet-mcp-servers-');
  afterAll(() => tmp.cleanup());

  it('reads a YAML file and inline JSON, expanding ${VAR} from the environment', () => {
    const file = path.join(tmp.dir, 'servers.yaml');
    fs.writeFileSync(
      file,
      [
        'mcpServers:',
        '  memory:',
        '    command: npx',
        '    args: ["-y", "@modelcontextprotocol/server-memory"]',
        '    cwd: work',
        '    env: { MEMORY_FILE_PATH: "${HOME_DIR}/m.jsonl" }',
        '  off:',
        '    command: nothing',
        '    disabled: true',
      ].join('\n'),
    );
    const specs = configuredMcpServers({
      MCP_SERVERS_FILE: file,
      MCP_SERVERS: JSON.stringify({
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, tools: ['x'] },
      }),
      HOME_DIR: '/srv',
      TOKEN: 's3cret',
    });
    expect(specs).toEqual([
      {
        id: 'memory',
        url: 'stdio:npx -y @modelcontextprotocol/server-memory',
        secrets: ['/srv'],
        mcp: {
          transport: 'stdio',
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory'],
          cwd: path.join(tmp.dir, 'work'),
          env: { MEMORY_FILE_PATH: '/srv/m.jsonl' },
        },
      },
      {
        id: 'remote',
        url: 'https://mcp.example.com/mcp',
        tools: ['x'],
        secrets: ['s3cret'],
        mcp: { transport: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret' } },
      },
    ]);
  });

  it('keeps protocolVersion "2026-07-28" (spoken to with the v2 client) and "2025-11-25" of an HTTP server', () => {
    const [spec] = configuredMcpServers({
      MCP_SERVERS: JSON.stringify({ modern: { url: 'http://h/mcp', protocolVersion: '2026-07-28' } }),
    });
    expect(spec.mcp).toEqual({ transport: 'streamable-http', url: 'http://h/mcp', headers: {}, protocolVersion: '2026-07-28' });
    const [plain] = configuredMcpServers({
      MCP_SERVERS: JSON.stringify({ plain: { url: 'http://h/mcp', protocolVersion: '2025-11-25' } }),
    });
    // declared 2025-11-25: kept too, so that the gateway asks it initialize only (no server/discover first)
    expect(plain.mcp).toEqual({ transport: 'streamable-http', url: 'http://h/mcp', headers: {}, protocolVersion: '2025-11-25' });
    const [undeclared] = configuredMcpServers({ MCP_SERVERS: JSON.stringify({ plain: { url: 'http://h/mcp' } }) });
    expect(undeclared.mcp).toEqual({ transport: 'streamable-http', url: 'http://h/mcp', headers: {} });
  });

  it('masks credentials written as they are (not as ${VAR}): a URL password in an argument, credential flags, token variables and headers', () => {
    const [stdio, http] = configuredMcpServers({
      PW: 'expanded-pw-1234',
      MCP_SERVERS: JSON.stringify({
        pg: {
          command: 'mcp-server-postgres',
          args: [
            'postgresql://app:p%40ss-w0rd@db:5432/x',
            // a password with an @ of its own, not encoded: URL parsers take the authority's last @
            'redis://default:r3d@is-pw@cache:6379',
            '--token=tok-3a9f',
            '--api-key',
            'key-77c2',
            '--port',
            '5432',
            '--secret=${PW}',
            '--passthrough',
            'plain-value',
            '--author=someone',
            '--verbose',
          ],
          env: { GITHUB_TOKEN: 'ghp_literal1', NODE_ENV: 'production', DB_PASSWORD: 'pw-9911' },
        },
        web: {
          url: 'http://user:http-pw-77c1@h/mcp',
          headers: { Authorization: 'Bearer bearer-5e1d', 'X-Api-Key': 'xkey-0c4b', Accept: 'text/plain' },
        },
      }),
    });
    // the password as written and decoded; a flag's value joined or separate; the variables and headers whose names say credential
    expect(stdio.secrets).toEqual(
      expect.arrayContaining([
        'p%40ss-w0rd',
        'p@ss-w0rd',
        'r3d@is-pw',
        'tok-3a9f',
        'key-77c2',
        'ghp_literal1',
        'pw-9911',
        'expanded-pw-1234',
      ]),
    );
    expect(stdio.secrets).not.toEqual(expect.arrayContaining(['5432']));
    expect(stdio.secrets).not.toContain('production');
    expect(stdio.secrets).not.toContain('--verbose');
    // names that only look like one (pass..., auth...) are not taken
    expect(stdio.secrets).not.toContain('plain-value');
    expect(stdio.secrets).not.toContain('someone');
    expect(stdio.url).toBe(
      'stdio:mcp-server-postgres postgresql://app:***@db:5432/x redis://default:***@cache:6379 --token=*** --api-key *** --port 5432 --secret=${PW} --passthrough plain-value --author=someone --verbose',
    );
    expect(http.secrets).toEqual(expect.arrayContaining(['Bearer bearer-5e1d', 'bearer-5e1d', 'xkey-0c4b', 'http-pw-77c1']));
    expect(http.secrets).not.toContain('text/plain');
  });

  it('keeps protocolVersion "2026-07-28" of a stdio server too', () => {
    const [spec] = configuredMcpServers({
      MCP_SERVERS: JSON.stringify({ modern: { command: 'modern-server', args: ['--stdio'], protocolVersion: '2026-07-28' } }),
    });
    expect(spec.mcp).toEqual({ transport: 'stdio', command: 'modern-server', args: ['--stdio'], env: {}, protocolVersion: '2026-07-28' });
  });

  it("takes a server's own time limit (timeoutMs)", () => {
    const [spec] = configuredMcpServers({ MCP_SERVERS: JSON.stringify({ slow: { command: 'slow-server', timeoutMs: 120_000 } }) });
    expect(spec).toMatchObject({ id: 'slow', timeoutMs: 120_000 });
    expect(() => configuredMcpServers({ MCP_SERVERS: JSON.stringify({ slow: { command: 'x', timeoutMs: 10 } }) })).toThrow(/timeoutMs/);
  });

  it('takes a server of the older HTTP+SSE transport (type "sse", as other clients declare it)', () => {
    const [spec] = configuredMcpServers({
      MCP_SERVERS: JSON.stringify({ mcpServers: { legacy: { type: 'sse', url: 'http://h:9/sse', headers: { 'X-Key': 'k' } } } }),
    });
    expect(spec).toMatchObject({ id: 'legacy', mcp: { transport: 'sse', url: 'http://h:9/sse', headers: { 'X-Key': 'k' } } });
  });

  it("takes other clients' files as they are: VS Code's servers and ${env:NAME}, Windsurf's serverUrl, Gemini's httpUrl, Cline's keys", () => {
    const vscode = configuredMcpServers({
      MCP_SERVERS_FILE: writeJson('mcp.json', {
        inputs: [{ type: 'promptString', id: 'unused', description: 'never asked' }],
        servers: {
          memory: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { KEY: '${env:MY_KEY}' } },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } },
        },
      }),
      MY_KEY: 'k-value',
      TOKEN: 's3cret',
    });
    expect(vscode).toMatchObject([
      { id: 'memory', mcp: { transport: 'stdio', command: 'npx', env: { KEY: 'k-value' } } },
      {
        id: 'remote',
        mcp: { transport: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret' } },
      },
    ]);
    const others = configuredMcpServers({
      MCP_SERVERS: JSON.stringify({
        mcpServers: {
          windsurf: { serverUrl: 'https://w.example.com/mcp' },
          gemini: { httpUrl: 'https://g.example.com/mcp', timeout: 30000, trust: false },
          cline: { type: 'streamableHttp', url: 'https://c.example.com/mcp', autoApprove: ['read'], alwaysAllow: [], disabled: false },
          oldcline: { transportType: 'sse', url: 'https://o.example.com/sse' },
          local: {
            command: 'server',
            args: ['--port', 8080, '--verbose', true],
            env: { DEBUG: true, N: 2 },
            description: 'a note',
            autoApprove: [],
          },
        },
      }),
    });
    expect(others.map((s) => [s.id, s.mcp?.transport, 'url' in (s.mcp ?? {}) ? (s.mcp as { url: string }).url : undefined])).toEqual([
      ['windsurf', 'streamable-http', 'https://w.example.com/mcp'],
      ['gemini', 'streamable-http', 'https://g.example.com/mcp'],
      ['cline', 'streamable-http', 'https://c.example.com/mcp'],
      ['oldcline', 'sse', 'https://o.example.com/sse'],
      ['local', 'stdio', undefined],
    ]);
    expect(others[4].mcp).toMatchObject({ args: ['--port', '8080', '--verbose', 'true'], env: { DEBUG: 'true', N: '2' } });
    // a VS Code prompt the gateway cannot ask is named, with what to do
    expect(() =>
      configuredMcpServers({
        MCP_SERVERS: JSON.stringify({ servers: { gh: { url: 'https://h/mcp', headers: { A: '${input:token}' } } } }),
      }),
    ).toThrow(
      /gh: \$\{input:token\} is a prompt of VS Code's; the gateway asks nobody: put the value in its environment and write \$\{NAME\}/,
    );
    // a key of none of them is still refused (a typo is not guessed)
    expect(() => configuredMcpServers({ MCP_SERVERS: JSON.stringify({ x: { command: 'server', comand: 'y' } }) })).toThrow(/comand/);
  });

  it('names every bad entry at once, as the rest of the configuration does', () => {
    let err: ConfigError | undefined;
    try {
      configuredMcpServers({
        MCP_SERVERS: JSON.stringify({
          mcpServers: {
            Bad_Id: { command: 'x' },
            'filesystem-mcp': { command: 'x' },
            legacy: { type: 'sse', url: 'http://x/sse', protocolVersion: '2026-07-28' },
            neither: { args: ['a'] },
            secret: { url: 'http://h/mcp', headers: { Authorization: 'Bearer ${UNSET_TOKEN}' } },
            ftp: { url: 'ftp://h/mcp' },
            future: { url: 'http://h/mcp', protocolVersion: '2027-01-01' },
          },
        }),
      });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = err!.problems.map((p) => `${p.variable}: ${p.message}`).join('\n');
    expect(text).toMatch(/Bad_Id: the id must be/);
    expect(text).toMatch(/filesystem-mcp: filesystem-mcp is a fleet service/);
    expect(text).toMatch(/legacy\.protocolVersion: an SSE server speaks a 2025-era revision/);
    expect(text).toMatch(/neither: needs "command" \(stdio\) or "url"/);
    expect(text).toMatch(/secret\.headers\.Authorization: \$\{UNSET_TOKEN\} is not set/);
    expect(text).toMatch(/ftp\.url: must be an http\(s\) URL/);
    expect(text).toMatch(/future: needs "command" \(stdio\) or "url" \(streamable-http\): protocolVersion: /);
    expect(() => configuredMcpServers({ MCP_SERVERS: '{not json' })).toThrow(/MCP_SERVERS: is not JSON/);
    expect(() => configuredMcpServers({ MCP_SERVERS_FILE: path.join(tmp.dir, 'missing.json') })).toThrow(/cannot read .*ENOENT/);
    expect(() =>
      configuredMcpServers({ MCP_SERVERS: '{"a": {"command": "x"}}', MCP_SERVERS_FILE: writeJson('dup.json', { a: { command: 'y' } }) }),
    ).toThrow(/a is declared twice/);
  });

  it('starts the inventory stdio servers from this checkout, passing only their own variables', () => {
    const { specs, skipped } = inventoryStdioServers({
      WORKSPACE_ROOTS: '/w',
      LLM_BASE_URL: 'http://llm',
      SECRET_KEY: 'no',
      DATA_DIR: '/d',
    });
    expect(skipped).toEqual([]);
    expect(specs.map((s) => s.id)).toEqual(['toolkit-mcp-server']);
    const mcp = specs[0].mcp!;
    expect(mcp.transport).toBe('stdio');
    if (mcp.transport !== 'stdio') return;
    expect(mcp.args.at(-1)).toMatch(/services\/toolkit-mcp-server\/src\/server\.ts$/);
    // SANDBOX=outer: git of precommit runs inside the sandbox the gateway starts it in (bubblewrap does not nest)
    expect(mcp.env).toEqual({ WORKSPACE_ROOTS: '/w', LLM_BASE_URL: 'http://llm', DATA_DIR: '/d', SANDBOX: 'outer' });
    // spoken to in the era it is written for: not asked server/discover in a second process first
    expect(mcp.protocolVersion).toBe('2025-11-25');
    // the operator's sandbox settings for programs reach it; SANDBOX=off stands, bwrap becomes outer (it runs inside the gateway's)
    const envOf = (env: Record<string, string>) => {
      const spec = inventoryStdioServers(env).specs[0].mcp!;
      return spec.transport === 'stdio' ? spec.env : undefined;
    };
    expect(envOf({ SANDBOX: 'off', GIT_TIMEOUT_MS: '5000' })).toEqual({ SANDBOX: 'off', GIT_TIMEOUT_MS: '5000' });
    expect(envOf({ SANDBOX: 'bwrap', SANDBOX_BWRAP: '/opt/bwrap' })).toEqual({ SANDBOX: 'outer', SANDBOX_BWRAP: '/opt/bwrap' });
    expect(inventoryStdioServers({}, undefined, tmp.dir).skipped[0]).toMatch(/toolkit-mcp-server: .* is not in this installation/);
  });

  it('adds them to the gateway’s downstreams, and STDIO_SERVERS=false leaves the inventory ones out', () => {
    const on = readConfig({ DATA_DIR: tmp.dir, MCP_SERVERS: '{"memory": {"command": "node"}}' });
    expect(on.downstreams!.filter((d) => d.mcp).map((d) => d.id)).toEqual(['toolkit-mcp-server', 'memory']);
    const off = readConfig({ DATA_DIR: tmp.dir, STDIO_SERVERS: 'false' });
    expect(off.downstreams!.some((d) => d.mcp)).toBe(false);
  });

  function writeJson(name: string, doc: unknown): string {
    const file = path.join(tmp.dir, name);
    fs.writeFileSync(file, JSON.stringify(doc));
    return file;
  }
});
