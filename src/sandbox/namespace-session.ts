import { type ChildProcessWithoutNullStreams, type SpawnOptions, type StdioOptions, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Readable, Writable } from 'node:stream';
import { errorMessage } from '../errors.js';
import type { SandboxUser } from './bwrap.js';
import { NAMESPACE_INIT_SCRIPT } from './namespace-init.js';
import { acquirePidsCgroup, releasePidsCgroup } from './process-limit.js';
import { seccompFilter } from './seccomp-filter.js';
import type { CommandRequest, Launcher, StartedCommand } from './process-group.js';

/** How to start one sandbox's namespaces: plain data, it crosses IPC to the spawn host. */
export interface NamespaceSpec {
  /** The bubblewrap binary and its options, up to (not including) the program to run. */
  bwrap: string[];
  /** The whole environment of bubblewrap and the init: built from scratch, no secrets. */
  env: Record<string, string>;
  /** Name of the pids cgroup to create (the sandbox folder's name), with its limit. */
  cgroup?: { name: string; pidsLimit: number };
  /** Start bubblewrap as this user (traj is root): its namespaces, and every command, are that user's. */
  user?: SandboxUser;
  /** Load the seccomp filter (seccomp-filter.ts) where one exists for this machine. */
  seccomp?: boolean;
}

/** The file descriptor bubblewrap reads the seccomp filter from. */
const SECCOMP_FD = 3;
/** bubblewrap writes its namespace's first process id here, as JSON (`--info-fd`)... */
const INFO_FD = 4;
/** ...and that process waits for a byte here before it goes on (`--block-fd`): see joinCgroup. */
const BLOCK_FD = 5;

/** How long dispose waits for the namespace to empty after its init was told to exit. */
const CLOSE_GRACE_MS = 3_000;
const STDERR_KEPT = 4_096;

/**
 * One bubblewrap sandbox seen from the spawn host: bwrap running the Perl init of
 * namespace-init.ts, and the commands it runs for us. Closing it ends the init, which is
 * bubblewrap's only child: the kernel then kills every process left in the PID namespace
 * (`setsid` or not), and bubblewrap exits only once they are gone.
 */
export class NamespaceSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly jobs = new Map<number, RemoteCommand>();
  private nextId = 1;
  private input: Buffer = Buffer.alloc(0);
  private stderrTail = '';
  private readonly exited: Promise<void>;
  private cgroup?: string;
  readonly ready: Promise<void>;

  constructor(spec: NamespaceSpec) {
    const filter = spec.seccomp ? seccompFilter() : undefined;
    if (spec.cgroup) this.cgroup = acquirePidsCgroup(spec.cgroup.name, spec.cgroup.pidsLimit);
    const program = [
      ...spec.bwrap,
      ...(filter ? ['--seccomp', String(SECCOMP_FD)] : []),
      ...(this.cgroup ? ['--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD)] : []),
      'perl',
      '-e',
      NAMESPACE_INIT_SCRIPT,
    ];
    const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', filter ? 'pipe' : 'ignore'];
    if (this.cgroup) stdio.push('pipe', 'pipe');
    // As root, the child drops to the sandbox user between fork and exec (libuv clears the
    // supplementary groups, then sets the gid and uid), so bubblewrap's namespaces are that user's.
    const options: SpawnOptions = {
      env: spec.env,
      stdio,
      ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
    };
    this.child = spawn(program[0]!, program.slice(1), options) as ChildProcessWithoutNullStreams;
    if (filter) {
      const channel = this.child.stdio[SECCOMP_FD] as Writable;
      channel.on('error', () => {});
      channel.end(filter);
    }
    if (this.cgroup) this.joinCgroup(this.cgroup);
    this.child.stdin.on('error', () => {});
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    this.exited = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.once('error', reject);
      this.readyHandlers = { resolve, reject };
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.once('exit', (code, signal) => this.onExit(code, signal));
  }

  /**
   * Put bubblewrap in the pids cgroup before anything in the sandbox forks: bubblewrap reports its
   * namespace's first process on the info fd, and that process waits on the block fd until both
   * are in the group. Everything the sandbox starts later is born there. If the join fails the
   * sandbox is killed: it never runs without its process limit.
   */
  private joinCgroup(cgroup: string): void {
    // The typed tuple stops at fd 4; the spawn above made fds 4 and 5 pipes.
    const pipes = this.child.stdio as unknown as (Readable & Writable)[];
    const info = pipes[INFO_FD]!;
    const release = pipes[BLOCK_FD]!;
    release.on('error', () => {});
    let text: string | undefined = '';
    info.on('error', () => {});
    info.on('data', (chunk: Buffer) => {
      if (text === undefined) return;
      text += chunk.toString('utf8');
      const inside = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (!inside) return;
      text = undefined;
      try {
        for (const pid of [this.child.pid, Number(inside)]) writeFileSync(join(cgroup, 'cgroup.procs'), `${pid}\n`);
      } catch (error) {
        this.stderrTail += `cannot join the pids cgroup ${cgroup}: ${errorMessage(error)}`;
        this.child.kill('SIGKILL');
        return;
      }
      release.end('x');
    });
  }

  private readyHandlers?: { resolve(): void; reject(error: Error): void };

  readonly launch: Launcher = (request: CommandRequest) => {
    const id = this.nextId++;
    // Output may end before the exit status arrives: the job is dropped only once it has both.
    const command = new RemoteCommand(
      () => this.send('kill', id),
      (data) => this.send('write', id, data),
      () => this.send('forget', id),
      () => this.jobs.delete(id),
    );
    this.jobs.set(id, command);
    const env = Object.entries(request.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
    const fields = [
      request.cwd,
      request.keepStdin ? (request.argv ?? ['bash', '-c', request.command]).join('\x01') : request.command,
      String(env.length),
      ...env.map(([name, value]) => `${name}=${value}`),
    ];
    const stdin = typeof request.stdin === 'string' ? Buffer.from(request.stdin) : (request.stdin ?? Buffer.alloc(0));
    this.send(request.keepStdin ? 'exec' : 'run', id, Buffer.concat([Buffer.from(`${fields.join('\0')}\0`), stdin]));
    if (this.child.exitCode !== null || this.child.signalCode !== null)
      queueMicrotask(() => command.fail(this.exitReason()));
    return command;
  };

  /** End the init and wait until the namespace is empty; SIGKILL bubblewrap if it lingers. */
  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
    // Its processes are gone already (bubblewrap exits after them); the empty group can go later.
    if (this.cgroup) void releasePidsCgroup(this.cgroup);
  }

  /** Kill at once (the spawn host is going away). */
  kill(): void {
    this.child.kill('SIGKILL');
  }

  private send(type: string, id: number, payload: Buffer = Buffer.alloc(0)): void {
    if (!this.child.stdin.writable) return;
    this.child.stdin.write(Buffer.concat([Buffer.from(`${type} ${id} ${payload.length}\n`), payload]));
  }

  private onData(chunk: Buffer): void {
    this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
    for (;;) {
      const newline = this.input.indexOf(10);
      if (newline < 0) return;
      const [type, idText, lengthText] = this.input.subarray(0, newline).toString('latin1').split(' ');
      const length = Number(lengthText);
      if (this.input.length < newline + 1 + length) return;
      const payload = this.input.subarray(newline + 1, newline + 1 + length);
      this.input = this.input.subarray(newline + 1 + length);
      this.dispatch(type ?? '', Number(idText), payload);
    }
  }

  private dispatch(type: string, id: number, payload: Buffer): void {
    if (type === 'ready') {
      this.readyHandlers?.resolve();
      return;
    }
    const job = this.jobs.get(id);
    if (!job) return;
    if (type === 'out') job.output(job.stdout, payload);
    else if (type === 'err') job.output(job.stderr, payload);
    else if (type === 'exit') job.exited(Number(payload.toString()));
    else if (type === 'fail') job.fail(payload.toString());
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const reason = this.exitReason(code, signal);
    this.readyHandlers?.reject(new Error(reason));
    for (const job of this.jobs.values()) job.fail(reason);
    this.jobs.clear();
  }

  private exitReason(code = this.child.exitCode, signal = this.child.signalCode): string {
    const tail = this.stderrTail.trim();
    return `the sandbox's namespace exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ''}`;
  }
}

/** A command run by the init, shaped like a host child process for runInProcessGroup. */
class RemoteCommand extends EventEmitter implements StartedCommand {
  readonly pid = undefined;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private finished = false;
  private pending = 3;

  constructor(
    readonly killGroup: () => void,
    readonly write: (data: Buffer) => void,
    forget: () => void,
    private readonly done: () => void,
  ) {
    super();
    let open = 2;
    const closed = () => {
      if (--open === 0) forget();
      this.settle();
    };
    this.stdout.once('close', closed);
    this.stderr.once('close', closed);
  }

  /** Called for each stream closed and for the exit: after all three the job is done. */
  private settle(): void {
    if (--this.pending === 0) this.done();
  }

  output(stream: PassThrough, chunk: Buffer): void {
    if (stream.destroyed || stream.writableEnded) return;
    if (chunk.length === 0) stream.end();
    else stream.write(chunk);
  }

  fail(message: string): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('error', new Error(message));
    this.stdout.destroy();
    this.stderr.destroy();
    this.settle();
  }

  exited(code: number): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('exit', code, null);
    this.settle();
  }
}
