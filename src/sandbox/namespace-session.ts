import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { errorMessage } from '../errors.js';
import { acquirePidsCgroup, releasePidsCgroup } from './process-limit.js';
import type { CommandRequest, Launcher, StartedCommand } from './process-group.js';
import { openHeldPipes, reportedPipes } from './process-pipes.js';
import type { Zygote, ZygoteChannel, ZygoteSandboxRequest, ZygoteSpec } from './zygote.js';
import { encodeFrame, FrameParser } from './frame-parser.js';

/** How to start one sandbox's namespaces: plain data, it crosses IPC to the spawn host. */
export interface NamespaceSpec {
  /** The zygote that forks it (one per distinct spec in the spawn host). */
  zygote: ZygoteSpec;
  /** The sandbox's folder, as a name under the zygote's staging folder; absent when the zygote binds it. */
  folder?: ZygoteSandboxRequest['folder'];
  network: boolean;
  /** Name of the pids cgroup to create (the sandbox folder's name), with its limit. */
  cgroup?: { name: string; pidsLimit: number };
  /** Reuse these namespaces for a later sandbox of the same spec once this one is done and they are as new (recycle). */
  reuse: boolean;
}

/** Sandboxes whose namespaces may stand in for each other: the same zygote, network and process limit. */
export function reuseKey(spec: NamespaceSpec): string {
  return JSON.stringify([spec.zygote, spec.network, spec.cgroup?.pidsLimit ?? null]);
}

/** How long dispose waits for the namespace to empty after its init was told to exit. */
const CLOSE_GRACE_MS = 3_000;

/**
 * One sandbox seen from the spawn host: namespaces the zygote forked (zygote-script.ts), whose
 * PID 1 runs the Perl init of namespace-init.ts and the commands it runs for us. Closing it ends
 * the init: the kernel then kills every process left in the PID namespace (`setsid` or not), and
 * the zygote reports the sandbox gone only once they are.
 *
 * Or it is recycled for the next rollout: making namespaces costs more machine CPU than anything
 * else in a sandboxed rollout (docs/performance.md, #35). Its init kills every process and finds
 * nothing left; the zygote then replaces every folder the rollout changed, and attaches the next
 * rollout's folder when one takes it. Any doubt ends it instead.
 */
export class NamespaceSession {
  private readonly channel: ZygoteChannel;
  private readonly jobs = new Map<number, RemoteCommand>();
  /** The `name` frame of the rollout that took these namespaces, until it goes with the next frame. */
  private heldName?: Buffer;
  private nextId = 1;
  private readonly frames = new FrameParser((type, id, payload) => this.dispatch(type, id, payload));
  /** Why the namespace ended or never started, once it has. */
  private gone?: string;
  private resolveExited!: () => void;
  private readonly exited = new Promise<void>((resolve) => {
    this.resolveExited = resolve;
  });
  private cgroup?: string;
  readonly ready: Promise<void>;
  /** reuseKey of its spec, when it may be reused. */
  readonly reuse?: string;
  /** The answer awaited to a reset (namespace-init.ts). */
  private resetDone?: (residue: string) => void;
  /** The init's pid here: a persistent shell's pipes are opened through its /proc/PID/fd. */
  private initPid?: number;
  /** False once the kernel refused such an open (or when asked): every later shell is relayed. */
  private takePipes: boolean;

  constructor(zygote: Zygote, spec: NamespaceSpec, options: { takePipes?: boolean } = {}) {
    this.takePipes = options.takePipes ?? true;
    if (spec.reuse) this.reuse = reuseKey(spec);
    if (spec.cgroup) this.cgroup = acquirePidsCgroup(spec.cgroup.name, spec.cgroup.pidsLimit);
    this.ready = new Promise<void>((resolve, reject) => {
      this.readyHandlers = { resolve, reject };
    });
    // Never unhandled: open() awaits it, and a later failure reaches every job instead.
    this.ready.catch(() => {});
    const cgroup = this.cgroup;
    this.channel = zygote.open(
      { ...(spec.folder ? { folder: spec.folder } : {}), network: spec.network, wait: cgroup !== undefined },
      {
        onPid: (pid) => {
          this.initPid = pid;
          if (cgroup) this.joinCgroup(cgroup, pid);
        },
        onData: (chunk) => this.frames.push(chunk),
        onGone: (reason) => this.onGone(reason),
      },
    );
  }

  /**
   * Put the sandbox's PID 1 in its pids cgroup before it runs anything: it waits for `go` until
   * then, so everything the sandbox starts later is born there. If the join fails the sandbox is
   * killed: it never runs without its process limit.
   */
  private joinCgroup(cgroup: string, pid: number): void {
    try {
      writeFileSync(join(cgroup, 'cgroup.procs'), `${pid}\n`);
      this.channel.send('go');
    } catch (error) {
      this.failure = `cannot join the pids cgroup ${cgroup}: ${errorMessage(error)}`;
      this.channel.send('kill');
    }
  }

  /** A setup failure reported by the sandbox itself, kept for the reason given to jobs. */
  private failure?: string;

  private readyHandlers?: { resolve(): void; reject(error: Error): void };

  readonly launch: Launcher = (request: CommandRequest) => {
    const id = this.nextId++;
    // Output may end before the exit status arrives: the job is dropped only once it has both.
    const command = new RemoteCommand(
      () => this.send('kill', id),
      (data) => this.send('write', id, data),
      () => this.send('forget', id),
      () => this.jobs.delete(id),
      request.keepStdin === true,
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
    // A persistent shell's first input goes where its pipes end up (taken here, or relayed): after `started`.
    if (request.keepStdin && stdin.length > 0) command.write(stdin);
    const sent = request.keepStdin ? Buffer.alloc(0) : stdin;
    this.send(request.keepStdin ? 'exec' : 'run', id, Buffer.concat([Buffer.from(`${fields.join('\0')}\0`), sent]));
    if (this.gone !== undefined) queueMicrotask(() => command.fail(this.exitReason()));
    return command;
  };

  /** End the init and wait until the namespace is empty; kill the sandbox if it lingers. */
  async close(): Promise<void> {
    this.channel.send('close');
    const timer = setTimeout(() => this.channel.send('kill'), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
    // Its processes are gone already (the zygote reports the sandbox gone after them); the empty group can go later.
    if (this.cgroup) void releasePidsCgroup(this.cgroup);
  }

  /**
   * End this rollout's use and make the namespaces as new for the next: the init kills every
   * process (its jobs end here as failed) and reports what is left; the zygote then replaces the
   * private folders it changed. True when both found nothing; else the caller closes it.
   */
  async recycle(): Promise<boolean> {
    if (this.gone !== undefined || this.failure !== undefined) return false;
    for (const job of this.jobs.values()) job.fail('the sandbox was closed');
    this.jobs.clear();
    const residue = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('the reset took too long'), CLOSE_GRACE_MS);
      this.resetDone = (residue) => {
        clearTimeout(timer);
        resolve(residue);
      };
      this.send('reset', 0);
    });
    this.resetDone = undefined;
    return residue === '' && this.gone === undefined && (await this.channel.prepare('scrub')) === '';
  }

  /** Bind the next rollout's folder into recycled namespaces; rejects (then close it) when that fails. */
  async attach(folder: NamespaceSpec['folder']): Promise<void> {
    const why = await this.channel.prepare('attach', folder);
    if (why !== '') throw new Error(`cannot reuse the sandbox's namespaces: ${why}`);
    // Sent with the next frame (the first command's): one wake of the init fewer per rollout.
    this.heldName = encodeFrame('name', 0, Buffer.from(folder?.path ?? ''));
  }

  /** Kill at once (the spawn host is going away): its pids cgroup, if any, for the caller to remove once empty. */
  kill(): string | undefined {
    this.channel.send('kill');
    return this.cgroup;
  }

  private send(type: string, id: number, payload: Buffer = Buffer.alloc(0)): void {
    if (this.gone !== undefined) return;
    const frame = encodeFrame(type, id, payload);
    const held = this.heldName;
    this.heldName = undefined;
    this.channel.send('data', held ? Buffer.concat([held, frame]) : frame);
  }

  private dispatch(type: string, id: number, payload: Buffer): void {
    if (type === 'ready') {
      this.readyHandlers?.resolve();
      return;
    }
    if (type === 'reset') {
      this.resetDone?.(payload.toString('utf8'));
      return;
    }
    if (type === 'fail' && id === 0) {
      this.failure = payload.toString('utf8').trim();
      return;
    }
    const job = this.jobs.get(id);
    if (!job) return;
    if (type === 'started') this.settlePipes(id, job, payload);
    else if (type === 'out') job.output(job.stdout, payload);
    else if (type === 'err') job.output(job.stderr, payload);
    else if (type === 'exit') job.exited(Number(payload.toString()));
    else if (type === 'fail') job.fail(payload.toString());
  }

  /**
   * A persistent shell started: take its pipe ends from the init (process-pipes.ts), so its
   * output comes straight here instead of through the init's frames (~1 ms of CPU per rollout,
   * docs/performance.md), or have them relayed where that open is refused. A plain run is relayed.
   */
  private settlePipes(id: number, job: RemoteCommand, payload: Buffer): void {
    const [, ...ends] = payload.toString('latin1').split(' ').map(Number);
    const pipes = reportedPipes(ends, ['write', 'read', 'read']);
    if (!pipes) return;
    let opened: number[] | undefined;
    if (this.takePipes && this.initPid !== undefined) {
      try {
        opened = openHeldPipes(this.initPid, pipes);
      } catch {
        this.takePipes = false;
      }
    }
    if (opened) job.takePipes(opened as [number, number, number]);
    else {
      this.send('relay', id);
      job.relayed();
    }
  }

  private onGone(reason: string | undefined): void {
    this.gone = reason ?? '';
    this.resetDone?.('the namespace exited');
    const why = this.exitReason();
    this.readyHandlers?.reject(new Error(why));
    for (const job of this.jobs.values()) job.fail(why);
    this.jobs.clear();
    this.resolveExited();
  }

  private exitReason(): string {
    const why = this.failure ?? this.gone;
    return `the sandbox's namespace exited${why ? `: ${why}` : ''}`;
  }
}

/** A command run by the init, shaped like a host child process for runInProcessGroup. */
class RemoteCommand extends EventEmitter implements StartedCommand {
  readonly pid = undefined;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private finished = false;
  private pending = 3;
  /** A persistent shell's stdin, held until its pipes are settled (taken here or relayed). */
  private held?: Buffer[];
  /** Its stdin pipe, when taken. */
  private input?: Socket;
  private sockets: Socket[] = [];

  constructor(
    readonly killGroup: () => void,
    private readonly relayInput: (data: Buffer) => void,
    forget: () => void,
    private readonly done: () => void,
    keepStdin: boolean,
  ) {
    super();
    if (keepStdin) this.held = [];
    let open = 2;
    const closed = () => {
      if (--open === 0) forget();
      this.settle();
    };
    this.stdout.once('close', closed);
    this.stderr.once('close', closed);
  }

  write(data: Buffer): void {
    if (this.held) this.held.push(data);
    else if (this.input) this.input.write(data);
    else this.relayInput(data);
  }

  /** The shell's pipe ends, opened here: stdin, stdout, stderr. */
  takePipes([input, output, error]: [number, number, number]): void {
    this.input = new Socket({ fd: input, readable: false, writable: true });
    // The shell's end goes first when it exits: a write then fails, and its exit is reported anyway.
    this.input.on('error', () => {});
    this.sockets = [this.input, this.reader(output, this.stdout), this.reader(error, this.stderr)];
    this.release();
  }

  /** The init relays this shell's pipes in frames. */
  relayed(): void {
    this.release();
  }

  private release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const data of held) this.write(data);
  }

  private reader(fd: number, stream: PassThrough): Socket {
    const socket = new Socket({ fd, readable: true, writable: false });
    socket.on('data', (chunk: Buffer) => this.output(stream, chunk));
    socket.once('end', () => this.output(stream, Buffer.alloc(0)));
    socket.once('error', () => this.output(stream, Buffer.alloc(0)));
    stream.once('close', () => socket.destroy());
    return socket;
  }

  /** Called for each stream closed and for the exit: after all three the job is done. */
  private settle(): void {
    if (--this.pending > 0) return;
    for (const socket of this.sockets) socket.destroy();
    this.done();
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
