import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildRoot } from '../../src/util/paths.js';

export const CLI = join(buildRoot(), 'src', 'cli', 'main.js');

/** A JSONL dataset of `count` one-line prompts, `<prefix> <index>`. */
export function writePrompts(path: string, count: number, prefix: string): void {
  writeFileSync(
    path,
    `${Array.from({ length: count }, (_, index) => JSON.stringify({ prompt: `${prefix} ${index}` })).join('\n')}\n`,
  );
}

export interface MockServer {
  url: string;
  child: ChildProcess;
  /** CPU the server process has used so far (user + system). */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** `traj mock-server` in its own process, so its CPU never counts as the harness's. */
export async function startMockServer(args: string[]): Promise<MockServer> {
  const child = spawn(process.execPath, [CLI, 'mock-server', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`mock-server exited with ${code}`)));
  });
  return {
    url,
    child,
    cpuMs: () => processCpuMs(child.pid!),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** user+sys CPU of a live process (all its threads) from /proc, in ms; 0 where /proc is absent. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** user+sys CPU of one thread of a live process (its main thread: `tid` = `pid`), in ms. */
export function threadCpuMs(pid: number, tid: number): number {
  return statCpuMs(`/proc/${pid}/task/${tid}/stat`);
}

function statCpuMs(file: string): number {
  try {
    // Fields 14 and 15 (utime, stime) follow the parenthesised command name, in clock ticks (100/s).
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

export interface CliMeasurement {
  code: number | null;
  stdout: string;
  stderr: string;
  wall_ms: number;
  /** The CLI process, all its threads. */
  cpu_ms: number;
  /** Its exited children: spawn hosts and the tool commands they ran (real `bash` processes). */
  children_cpu_ms: number;
  max_rss_mb: number;
  /** Date.now() when the process was spawned. */
  spawned_at: number;
}

/** Run the CLI and read its own resource report (wall, CPU of all threads, peak RSS). */
export async function measureCli(
  args: string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    /** Told the CLI's pid as soon as it is spawned. */
    onSpawn?: (pid: number) => void;
    /** Shell commands run before the CLI is exec'd in the same process (e.g. joining a cgroup). */
    shellPrefix?: string;
  },
): Promise<CliMeasurement> {
  const report = join(options.cwd, `resources-${process.hrtime.bigint()}.json`);
  const spawnedAt = Date.now();
  const [file, ...spawnArgs] = options.shellPrefix
    ? ['sh', '-c', `${options.shellPrefix}exec "$0" "$@"`, process.execPath, CLI, ...args]
    : [process.execPath, CLI, ...args];
  const child = spawn(file!, spawnArgs, {
    cwd: options.cwd,
    env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...options.env, TRAJ_RESOURCE_REPORT: report },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const resources = JSON.parse(readFileSync(report, 'utf8')) as {
    wall_ms: number;
    cpu_user_ms: number;
    cpu_system_ms: number;
    cpu_children_ms: number;
    max_rss_mb: number;
  };
  return {
    code,
    stdout,
    stderr,
    wall_ms: resources.wall_ms,
    cpu_ms: resources.cpu_user_ms + resources.cpu_system_ms,
    children_cpu_ms: resources.cpu_children_ms,
    max_rss_mb: resources.max_rss_mb,
    spawned_at: spawnedAt,
  };
}

export function scratchDirectory(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * CPU time the whole machine spent busy (user, nice, system, irq, softirq, steal of every core),
 * in ms, from /proc/stat. The kernel's work for a run (namespaces, mounts, page tables of exited
 * children) shows here and in no process's own times; the difference over a run, beside the
 * same-run figures of a baseline, is what a run costs the machine.
 */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const ticks = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
