import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { NAMESPACE_INIT_SCRIPT } from './namespace-init.js';
import { openHeldPipes, reportedPipes } from './process-pipes.js';
import { seccompFilter } from './seccomp-filter.js';
import { ZYGOTE_SCRIPT, zygoteSystemCalls } from './zygote-script.js';
import { encodeFrame, FrameParser } from './frame-parser.js';

/** How to start a zygote (zygote-script.ts): plain data, it crosses IPC to the spawn host. */
export interface ZygoteSpec {
  /** The bubblewrap binary and its options (bwrap.ts zygoteOptions), up to the program to run. */
  bwrap: string[];
  /** The whole environment of bubblewrap and the zygote: built from scratch, no secrets. */
  env: Record<string, string>;
  /** Start bubblewrap as this user (traj is root): the zygote's namespaces, and every command, are that user's. */
  user?: { uid: number; gid: number };
  /** Load the seccomp filter (seccomp-filter.ts) in every sandbox, where one exists for this machine. */
  seccomp: boolean;
}

/** One sandbox as the zygote makes it. */
export interface ZygoteSandboxRequest {
  /** The sandbox folder: where the zygote sees it (bwrap.ts zygoteOptions), and its path inside the sandbox. */
  folder?: { source: string; path: string };
  network: boolean;
  /** The session sends `go` once the pid (reported through `onPid`) is in the pids cgroup; without, it goes at once. */
  wait: boolean;
}

export interface ZygoteSandboxHandlers {
  /** The sandbox's PID 1 exists (its pid here); with `wait`, it waits for `go`. */
  onPid(pid: number): void;
  /** Bytes from the sandbox's init (namespace-init.ts protocol). */
  onData(chunk: Buffer): void;
  /** The namespace is empty (or the zygote died: `reason` says why). */
  onGone(reason?: string): void;
}

/** The spawn host's side of one sandbox in a zygote. */
export interface ZygoteChannel {
  send(type: 'go' | 'data' | 'close' | 'kill', payload?: Buffer): void;
  /**
   * Work on a live sandbox's namespaces for its reuse (zygote-script.ts): `scrub` replaces the
   * private folders the rollout changed (and /dev/pts, and its folder), `attach` binds the next
   * rollout's folder. Resolves empty when done, else why not.
   */
  prepare(step: 'scrub' | 'attach', folder?: ZygoteSandboxRequest['folder']): Promise<string>;
}

/**
 * The init's pipes held here, opened through /proc/ZYGOTE/fd: its input, its output, and which of
 * the two signs of its end have come (the zygote reaped the PID 1; the output reached its end).
 */
interface DirectPipes {
  input: Socket;
  output: Socket;
  reaped: boolean;
  drained: boolean;
}

interface Entry {
  handlers: ZygoteSandboxHandlers;
  request: ZygoteSandboxRequest;
  /** What the session sent before its pipes were settled (data and close keep their order). */
  queued?: { type: 'data' | 'close'; payload?: Buffer }[];
  direct?: DirectPipes;
  /** The answer awaited to a scrub or attach (one at a time). */
  prepared?: (why: string) => void;
}

const STDERR_KEPT = 4_096;

function closePipes(pipes: DirectPipes): void {
  pipes.input.destroy();
  pipes.output.destroy();
}

/** Arguments of the zygote after its script: system call numbers, the seccomp filter, the init. */
function zygoteArguments(seccomp: boolean): string[] {
  const calls = zygoteSystemCalls();
  if (!calls) throw new Error(`no system call numbers are written for ${process.arch}: the zygote cannot run here`);
  const filter = seccomp ? seccompFilter() : undefined;
  return [calls, filter ? filter.toString('hex') : '-', NAMESPACE_INIT_SCRIPT];
}

/** The command line of a zygote (probe: make one sandbox, exit 0 if it worked). */
export function zygoteCommand(spec: Pick<ZygoteSpec, 'bwrap' | 'seccomp'>, probe = false): string[] {
  return [...spec.bwrap, 'perl', '-e', ZYGOTE_SCRIPT, ...zygoteArguments(spec.seccomp), ...(probe ? ['probe'] : [])];
}

/**
 * A running zygote, seen from the spawn host. One per sandbox user and folder layout, for the life
 * of the spawn host; a dead one is replaced on the next open. Each sandbox's init protocol goes
 * straight between this process and the init: once the zygote reports a sandbox's pid and pipe
 * ends, they are opened here through /proc/ZYGOTE/fd and the zygote lets go of them. Relaying
 * through the zygote cost ~1.2 ms of CPU per rollout (docs/performance.md). Where the kernel
 * refuses that open, the zygote relays the protocol in frames tagged with the sandbox's number.
 */
export class Zygote {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly sandboxes = new Map<number, Entry>();
  private nextId = 1;
  private readonly frames = new FrameParser((type, id, payload) => this.dispatch(type, id, payload));
  private stderrTail = '';
  private ended?: string;
  /** The zygote's own pid (its `ready` frame): bubblewrap's child, not bubblewrap. */
  private pid?: number;
  /** Whether sandboxes' pipes are opened here (false once the kernel refused it, or when asked). */
  private direct: boolean;

  constructor(spec: ZygoteSpec, options: { direct?: boolean } = {}) {
    this.direct = options.direct ?? true;
    const [binary, ...rest] = zygoteCommand(spec);
    this.child = spawn(binary!, rest, {
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // As root, the child drops to the sandbox user between fork and exec, so bubblewrap's namespaces are that user's.
      ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
    });
    this.child.stdin.on('error', () => {});
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.frames.push(chunk));
    this.child.once('error', (error) => this.end(`cannot start bubblewrap: ${error.message}`));
    this.child.once('close', (code, signal) => this.end(this.exitReason(code, signal)));
  }

  get alive(): boolean {
    return this.ended === undefined;
  }

  /** The zygote's pid, once it said it is ready. */
  get processId(): number | undefined {
    return this.pid;
  }

  open(request: ZygoteSandboxRequest, handlers: ZygoteSandboxHandlers): ZygoteChannel {
    const id = this.nextId++;
    const channel: ZygoteChannel = {
      send: (type, payload) => this.toSandbox(id, type, payload),
      prepare: (step, folder) => this.prepare(id, step, folder),
    };
    if (this.ended !== undefined) {
      const reason = this.ended;
      queueMicrotask(() => handlers.onGone(reason));
      return channel;
    }
    this.sandboxes.set(id, { handlers, request, queued: [] });
    const fields = [request.folder?.source ?? '', request.folder?.path ?? '', request.network ? '1' : '0'];
    this.send('open', id, Buffer.from(fields.join('\0')));
    return channel;
  }

  private prepare(id: number, step: 'scrub' | 'attach', folder?: ZygoteSandboxRequest['folder']): Promise<string> {
    const entry = this.sandboxes.get(id);
    if (!entry || this.ended !== undefined) return Promise.resolve(this.ended ?? 'the sandbox is gone');
    return new Promise((resolve) => {
      entry.prepared = resolve;
      this.send(step, id, Buffer.from(step === 'attach' ? `${folder?.source ?? ''}\0${folder?.path ?? ''}` : ''));
    });
  }

  /** What a session sends: to its init straight, through the zygote, or held until that is settled. */
  private toSandbox(id: number, type: 'go' | 'data' | 'close' | 'kill', payload?: Buffer): void {
    const entry = this.sandboxes.get(id);
    if (type === 'go') this.send('go', id, Buffer.from(entry?.direct ? 'direct' : ''));
    else if (type === 'kill' || !entry) this.send(type, id, payload);
    else if (entry.queued) entry.queued.push({ type, ...(payload ? { payload } : {}) });
    else if (!entry.direct) this.send(type, id, payload);
    else if (type === 'data') entry.direct.input.write(payload ?? Buffer.alloc(0));
    else entry.direct.input.end();
  }

  /**
   * The sandbox's PID 1 exists and waits for `go`: take its pipe ends from the zygote if the kernel
   * lets this process open them, then let the session join the cgroup (or go on at once).
   */
  private started(id: number, entry: Entry, payload: Buffer): void {
    const [pid, ...ends] = payload.toString('latin1').split(' ').map(Number) as [number, ...number[]];
    const direct = this.openPipes(ends);
    if (direct) this.attach(id, entry, direct);
    const queued = entry.queued ?? [];
    delete entry.queued;
    for (const message of queued) this.toSandbox(id, message.type, message.payload);
    entry.handlers.onPid(pid);
    if (!entry.request.wait) this.toSandbox(id, 'go');
  }

  /** The init's pipe ends, opened through the zygote's descriptors (process-pipes.ts). */
  private openPipes(ends: number[]): DirectPipes | undefined {
    const pipes = reportedPipes(ends, ['write', 'read']);
    if (!this.direct || this.pid === undefined || !pipes) return undefined;
    let opened: number[] | undefined;
    try {
      opened = openHeldPipes(this.pid, pipes);
    } catch {
      // Refused (the kernel or a security module keeps other processes' descriptors shut): relay
      // from now on. Anything else (this init or the zygote is gone) is this sandbox's alone.
      this.direct = false;
    }
    if (!opened) return undefined;
    return {
      input: new Socket({ fd: opened[0]!, readable: false, writable: true }),
      output: new Socket({ fd: opened[1]!, readable: true, writable: false }),
      reaped: false,
      drained: false,
    };
  }

  private attach(id: number, entry: Entry, direct: DirectPipes): void {
    entry.direct = direct;
    // The init's end is gone first when it exits: a write then fails, and its exit is reported anyway.
    direct.input.on('error', () => {});
    direct.output.on('data', (chunk: Buffer) => entry.handlers.onData(chunk));
    const drained = () => {
      direct.drained = true;
      this.settle(id, entry);
    };
    direct.output.once('end', drained);
    direct.output.on('error', drained);
  }

  /** A direct sandbox is gone once its PID 1 was reaped and its output read to the end. */
  private settle(id: number, entry: Entry): void {
    if (!entry.direct?.reaped || !entry.direct.drained || this.sandboxes.get(id) !== entry) return;
    this.sandboxes.delete(id);
    closePipes(entry.direct);
    this.gone(entry);
  }

  /** A sandbox ended (`reason` when it did not just empty): a scrub or attach awaited gets that answer too. */
  private gone(entry: Entry, reason?: string): void {
    entry.prepared?.(reason ?? 'the sandbox is gone');
    entry.handlers.onGone(reason);
  }

  /** Kill the zygote: every sandbox dies with it (PR_SET_PDEATHSIG down the chain). */
  kill(): void {
    this.child.kill('SIGKILL');
  }

  private send(type: string, id: number, payload: Buffer = Buffer.alloc(0)): void {
    if (this.ended !== undefined || !this.child.stdin.writable) return;
    this.child.stdin.write(encodeFrame(type, id, payload));
  }

  private dispatch(type: string, id: number, payload: Buffer): void {
    if (type === 'ready') {
      this.pid = Number(payload.toString('latin1'));
      return;
    }
    const entry = this.sandboxes.get(id);
    if (!entry) return;
    if (type === 'scrubbed' || type === 'attached') {
      const prepared = entry.prepared;
      delete entry.prepared;
      prepared?.(payload.toString('utf8'));
    } else if (type === 'data') entry.handlers.onData(payload);
    else if (type === 'pid') this.started(id, entry, payload);
    else if (type === 'gone' && entry.direct) {
      entry.direct.reaped = true;
      this.settle(id, entry);
    } else if (type === 'gone' || type === 'fail') {
      this.sandboxes.delete(id);
      this.gone(entry, type === 'fail' ? payload.toString('utf8') : undefined);
    }
  }

  private end(reason: string): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    const entries = [...this.sandboxes.values()];
    this.sandboxes.clear();
    for (const entry of entries) {
      if (entry.direct) closePipes(entry.direct);
      this.gone(entry, reason);
    }
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): string {
    const tail = this.stderrTail.trim();
    return `the sandbox zygote exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ''}`;
  }
}
