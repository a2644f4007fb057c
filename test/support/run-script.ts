import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './fleet-process';

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the repository's bash scripts asynchronously (services answering it may live in this
 * process, so the event loop must keep turning). The environment is the given one plus PATH and
 * HOME only, so nothing leaks in from the test runner's own variables.
 */
export function runScript(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(REPO_ROOT, script), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: `${stderr}${String(err)}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The operator scripts of the contract (platform-interface.md, "Operator scripts"). */
export const CONTRACT_SCRIPTS = [
  'scripts/health-check.sh',
  'scripts/monitor-services.sh',
  'scripts/monitoring-health-check.sh',
  'scripts/vault-variant-b-smoke.sh',
  'scripts/backup-databases.sh',
  'scripts/install-mcp.sh',
  'scripts/diagnostics/quick_diagnose.sh',
  'scripts/diagnostics/production_monitor.sh',
  'scripts/marketplace/get_market_token.sh',
  'scripts/marketplace/install_skill_from_market.sh',
  'scripts/marketplace/client_configure_market.sh',
];
