import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import { promisify } from 'node:util';
import { AppError } from '@mcp-fleet/kit';

const execFileAsync = promisify(execFile);

export function systemInfo() {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpus: { count: cpus.length, model: cpus[0]?.model ?? 'unknown' },
    memory: { totalBytes: os.totalmem(), freeBytes: os.freemem() },
    loadAverage: os.loadavg(),
    uptimeSeconds: Math.round(os.uptime()),
    node: process.version,
  };
}

function cpuTotals() {
  return os.cpus().map((c) => {
    const t = c.times;
    return { idle: t.idle, total: t.user + t.nice + t.sys + t.idle + t.irq };
  });
}

/** CPU busy share per core and overall, measured over `sampleMs`. */
export async function sampleResources(sampleMs: number, signal?: AbortSignal) {
  const before = cpuTotals();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, sampleMs);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
  const after = cpuTotals();
  const perCore = after.map((a, i) => {
    const b = before[i] ?? a;
    const total = a.total - b.total;
    return total > 0 ? Math.round(((total - (a.idle - b.idle)) / total) * 1000) / 10 : 0;
  });
  const total = os.totalmem();
  const free = os.freemem();
  const mem = process.memoryUsage();
  return {
    sampleMs,
    cpu: { percent: Math.round((perCore.reduce((s, v) => s + v, 0) / Math.max(perCore.length, 1)) * 10) / 10, perCore },
    memory: { totalBytes: total, freeBytes: free, usedBytes: total - free, usedPercent: Math.round(((total - free) / total) * 1000) / 10 },
    loadAverage: os.loadavg(),
    process: { pid: process.pid, rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
  };
}

export interface ProcessRow {
  pid: number;
  ppid: number;
  user: string;
  cpuPercent: number;
  memPercent: number;
  rssKb: number;
  elapsed: string;
  command: string;
}

/** Processes from `ps` (run without a shell). */
export async function listProcesses(): Promise<ProcessRow[]> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('ps', ['-eo', 'pid=,ppid=,user=,pcpu=,pmem=,rss=,etime=,comm='], {
      maxBuffer: 8 * 1024 * 1024,
      timeout: 5000,
    }));
  } catch (err) {
    throw new AppError('INTERNAL', 'Could not list processes: the ps program failed or is missing (install procps).', { cause: err });
  }
  const rows: ProcessRow[] = [];
  for (const line of stdout.split('\n')) {
    const m = line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\S+)\s+(.*)$/);
    if (!m) continue;
    rows.push({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      user: m[3],
      cpuPercent: Number(m[4]),
      memPercent: Number(m[5]),
      rssKb: Number(m[6]),
      elapsed: m[7],
      command: m[8],
    });
  }
  return rows;
}

const VIRTUAL_FS = new Set([
  'proc',
  'sysfs',
  'devtmpfs',
  'devpts',
  'cgroup',
  'cgroup2',
  'securityfs',
  'pstore',
  'debugfs',
  'tracefs',
  'mqueue',
  'hugetlbfs',
  'configfs',
  'fusectl',
  'bpf',
  'autofs',
  'binfmt_misc',
  'nsfs',
  'rpc_pipefs',
]);

export interface DiskRow {
  mount: string;
  filesystem: string;
  type: string;
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
  usedPercent: number;
}

export async function statDisk(mount: string, filesystem = '', type = ''): Promise<DiskRow> {
  const s = await fs.statfs(mount);
  const total = s.blocks * s.bsize;
  const free = s.bavail * s.bsize;
  const used = total - s.bfree * s.bsize;
  return {
    mount,
    filesystem,
    type,
    totalBytes: total,
    usedBytes: used,
    freeBytes: free,
    usedPercent: total > 0 ? Math.round((used / (used + free)) * 1000) / 10 : 0,
  };
}

/** Mounted filesystems with real storage (from /proc/mounts; "/" alone where that is missing). */
export async function listDisks(): Promise<DiskRow[]> {
  let mounts: { mount: string; fs: string; type: string }[] = [];
  try {
    const text = await fs.readFile('/proc/mounts', 'utf8');
    mounts = text
      .split('\n')
      .map((l) => l.split(' '))
      .filter((p) => (p.length >= 3 && !VIRTUAL_FS.has(p[2]) && p[2] !== 'tmpfs' && p[2] !== 'overlay' ? true : p[1] === '/'))
      .map((p) => ({ fs: p[0], mount: p[1].replace(/\\040/g, ' '), type: p[2] }));
  } catch {
    mounts = [{ mount: '/', fs: '', type: '' }];
  }
  const seen = new Set<string>();
  const rows: DiskRow[] = [];
  for (const m of mounts) {
    if (seen.has(m.mount)) continue;
    seen.add(m.mount);
    try {
      rows.push(await statDisk(m.mount, m.fs, m.type));
    } catch {
      // unreadable mount points (permissions, stale network mounts) are left out
    }
  }
  return rows;
}
