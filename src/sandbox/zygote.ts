import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { NAMESPACE_INIT_SCRIPT } from './namespace-init.js';
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
  /** The sandbox's PID 1 waits for `go`, sent once its pid (reported through `onPid`) is in the pids cgroup. */
  wait: boolean;
}

export interface ZygoteSandboxHandlers {
  onPid(pid: number): void;
  /** Bytes from the sandbox's init (namespace-init.ts protocol). */
  onData(chunk: Buffer): void;
  /** The namespace is empty (or the zygote died: `reason` says why). */
  onGone(reason?: string): void;
}

/** The spawn host's side of one sandbox in a zygote. */
export interface ZygoteChannel {
  send(type: 'go' | 'data' | 'close' | 'kill', payload?: Buffer): void;
}

const STDERR_KEPT = 4_096;

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
 * A running zygote, seen from the spawn host: it relays each sandbox's init protocol inside
 * frames tagged with the sandbox's number. One per sandbox user and folder layout, for the life of
 * the spawn host; a dead one is replaced on the next open.
 */
export class Zygote {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly sandboxes = new Map<number, ZygoteSandboxHandlers>();
  private nextId = 1;
  private readonly frames = new FrameParser((type, id, payload) => this.dispatch(type, id, payload));
  private stderrTail = '';
  private ended?: string;

  constructor(spec: ZygoteSpec) {
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

  open(request: ZygoteSandboxRequest, handlers: ZygoteSandboxHandlers): ZygoteChannel {
    const id = this.nextId++;
    const channel: ZygoteChannel = { send: (type, payload) => this.send(type, id, payload) };
    if (this.ended !== undefined) {
      const reason = this.ended;
      queueMicrotask(() => handlers.onGone(reason));
      return channel;
    }
    this.sandboxes.set(id, handlers);
    const fields = [request.folder?.source ?? '', request.folder?.path ?? '', request.network ? '1' : '0'];
    this.send('open', id, Buffer.from([...fields, request.wait ? '1' : '0'].join('\0')));
    return channel;
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
    const handlers = this.sandboxes.get(id);
    if (!handlers) return;
    if (type === 'data') handlers.onData(payload);
    else if (type === 'pid') handlers.onPid(Number(payload.toString('latin1')));
    else if (type === 'gone') {
      this.sandboxes.delete(id);
      handlers.onGone();
    } else if (type === 'fail') {
      this.sandboxes.delete(id);
      handlers.onGone(payload.toString('utf8'));
    }
  }

  private end(reason: string): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    const handlers = [...this.sandboxes.values()];
    this.sandboxes.clear();
    for (const sandbox of handlers) sandbox.onGone(reason);
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): string {
    const tail = this.stderrTail.trim();
    return `the sandbox zygote exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ''}`;
  }
}
