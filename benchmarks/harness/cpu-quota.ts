import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A simulated machine on this one: a cgroup whose CPU bandwidth (CFS quota) caps a process and
 * all its children at `cores` of CPU time, however many cores the host has. cgroup v2 where its
 * cpu controller can be enabled, else cgroup v1's `cpu` (quota) and `cpuacct` (usage) hierarchies.
 * Needs root, or a delegated cgroup subtree.
 */
export interface CpuQuotaGroup {
  name: string;
  cores: number;
  /** Which cgroup interface holds the group: 'v2' or 'v1'. */
  version: 'v1' | 'v2';
  /** The `cgroup.procs` files a process writes its pid to to join the group. */
  procsFiles: string[];
  /** CPU time used by the group's processes so far (user + system), in ms. */
  usageMs(): number;
  /** Scheduling periods (100 ms) in which the group ran so far, and in how many it used up its quota. */
  periods(): { total: number; throttled: number };
  /** Move any process still in the group out (to the parent) and remove the group. */
  remove(): void;
}

/** CFS period: 100 ms, the kernel's default. */
const PERIOD_US = 100_000;
const PREFIX = 'traj-bench-';

interface Hierarchy {
  version: 'v1' | 'v2';
  /** v2: the unified mount; v1: the cpu controller's mount. */
  cpu: string;
  /** v1: the cpuacct controller's mount (may be the cpu one, `cpu,cpuacct`). */
  cpuacct?: string;
}

/** A group `name` capped at `cores` of CPU; throws saying why when this machine cannot make one. */
export function createCpuQuotaGroup(name: string, cores: number): CpuQuotaGroup {
  const hierarchy = findHierarchy();
  const directoryName = `${PREFIX}${process.pid}-${name}`;
  if (hierarchy.version === 'v2') return createV2(hierarchy.cpu, directoryName, name, cores);
  return createV1(hierarchy, directoryName, name, cores);
}

/** A sh prefix that moves the shell into the group before it execs the command that follows. */
export function joinGroupScript(group: CpuQuotaGroup): string {
  return group.procsFiles.map((file) => `echo $$ > '${file}' && `).join('');
}

function findHierarchy(): Hierarchy {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length >= 4);
  const reasons: string[] = [];
  const unified = mounts.find((fields) => fields[2] === 'cgroup2')?.[1];
  if (unified) {
    const why = enableV2Cpu(unified);
    if (!why) return { version: 'v2', cpu: unified };
    reasons.push(why);
  } else reasons.push('no cgroup2 mount');
  const v1 = (controller: string) =>
    mounts.find((fields) => fields[2] === 'cgroup' && fields[3]!.split(',').includes(controller))?.[1];
  const cpu = v1('cpu');
  const cpuacct = v1('cpuacct');
  if (cpu && cpuacct) {
    sweepStale(cpu);
    if (cpuacct !== cpu) sweepStale(cpuacct);
    return { version: 'v1', cpu, cpuacct };
  }
  reasons.push('no cgroup v1 cpu and cpuacct mounts');
  throw new Error(
    `cannot give simulated machines a CPU quota: ${reasons.join('; ')}. Run as root on a machine with cgroups ` +
      '(or run each worker in a container with --cpus)',
  );
}

/** Undefined when the unified hierarchy can cap CPU at its top level, else why not. */
function enableV2Cpu(mount: string): string | undefined {
  const controllers = readFileSync(join(mount, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  if (!controllers.includes('cpu')) return `cgroup2 at ${mount} has no cpu controller (it is bound to cgroup v1)`;
  const subtree = join(mount, 'cgroup.subtree_control');
  if (!readFileSync(subtree, 'utf8').split(/\s+/).includes('cpu')) {
    try {
      writeFileSync(subtree, '+cpu');
    } catch (error) {
      return `cannot enable the cpu controller in ${subtree}: ${(error as Error).message}`;
    }
  }
  sweepStale(mount);
  return undefined;
}

function createV2(mount: string, directoryName: string, name: string, cores: number): CpuQuotaGroup {
  const directory = join(mount, directoryName);
  mkdirSync(directory);
  writeFileSync(join(directory, 'cpu.max'), `${Math.round(cores * PERIOD_US)} ${PERIOD_US}`);
  const stat = (field: string) => statField(join(directory, 'cpu.stat'), field) / 1000;
  return {
    name,
    cores,
    version: 'v2',
    procsFiles: [join(directory, 'cgroup.procs')],
    usageMs: () => stat('usage_usec'),
    periods: () => periodsOf(join(directory, 'cpu.stat')),
    remove: () => removeGroup(directory, mount),
  };
}

function createV1(hierarchy: Hierarchy, directoryName: string, name: string, cores: number): CpuQuotaGroup {
  const cpu = join(hierarchy.cpu, directoryName);
  const cpuacct = join(hierarchy.cpuacct!, directoryName);
  mkdirSync(cpu);
  if (cpuacct !== cpu) mkdirSync(cpuacct);
  writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(Math.round(cores * PERIOD_US)));
  return {
    name,
    cores,
    version: 'v1',
    procsFiles:
      cpuacct === cpu ? [join(cpu, 'cgroup.procs')] : [join(cpu, 'cgroup.procs'), join(cpuacct, 'cgroup.procs')],
    usageMs: () => Number(readFileSync(join(cpuacct, 'cpuacct.usage'), 'utf8')) / 1e6,
    periods: () => periodsOf(join(cpu, 'cpu.stat')),
    remove: () => {
      removeGroup(cpu, hierarchy.cpu);
      if (cpuacct !== cpu) removeGroup(cpuacct, hierarchy.cpuacct!);
    },
  };
}

function periodsOf(file: string): { total: number; throttled: number } {
  return { total: statField(file, 'nr_periods'), throttled: statField(file, 'nr_throttled') };
}

function statField(file: string, field: string): number {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field} `));
  return Number(line?.split(' ')[1] ?? 0);
}

function removeGroup(directory: string, parent: string): void {
  if (!existsSync(directory)) return;
  // A group with processes cannot be removed: whatever is left (a straggler child) goes back to the parent.
  for (const pid of readFileSync(join(directory, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    try {
      writeFileSync(join(parent, 'cgroup.procs'), pid);
    } catch {
      // It exited meanwhile.
    }
  }
  for (let tries = 0; ; tries++) {
    try {
      rmdirSync(directory);
      return;
    } catch (error) {
      // The kernel frees a group a moment after its last process leaves.
      if (tries >= 50) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** Groups left by an earlier benchmark process that was killed before its cleanup ran. */
function sweepStale(mount: string): void {
  for (const entry of readdirSync(mount)) {
    const owner = entry.startsWith(PREFIX) ? Number(entry.slice(PREFIX.length).split('-')[0]) : Number.NaN;
    if (Number.isNaN(owner) || owner === process.pid || existsSync(`/proc/${owner}`)) continue;
    try {
      removeGroup(join(mount, entry), mount);
    } catch {
      // Still busy: left for the next sweep.
    }
  }
}
