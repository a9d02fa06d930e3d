import { SandboxError } from '../errors.js';
import { DEFAULT_EXEC_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_BYTES, type ExecOptions, type ShellResult } from './sandbox.js';
import { callText, MarkedStream, newNonce, parseEpilogue, restoreText, SHELL_BOOT } from './shell-protocol.js';

/** Node fires longer timers at once; about 24 days is "no timeout" in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** After a kill, how long the backend may take to report the shell's end before the call gives up on it. */
const KILL_GRACE_MS = 10_000;

export interface PersistentShellOptions {
  /** KILL_GRACE_MS for a backend whose kill may take longer (Docker's may restart the container). */
  killGraceMs?: number;
}

/** What a backend tells the shell about its process. */
export interface ShellHandlers {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /** The shell ended (its output drained): its exit code, or why it could not run. */
  exit(code: number, error?: string): void;
}

/** A running `bash -s` of a backend (spawn host, namespace init, container exec). */
export interface ShellProcess {
  write(text: string): void;
  /** Kill the shell's process group, and with it the command running in it. */
  kill(): void;
}

export type ShellStarter = (handlers: ShellHandlers) => ShellProcess;

interface Call {
  nonce: string;
  stdout: MarkedStream;
  stderr: MarkedStream;
  finish(result: ShellResult): void;
  fail(error: Error): void;
  stop?: 'timeout' | 'abort';
  started: number;
}

/**
 * The rollout's long-lived shell: commands run one after another in one bash, so `cd`, variables
 * and functions carry over. Each call's output ends at a per-call random marker printed after the
 * command (see shell-protocol.ts): output without a final newline, binary output or a fake marker
 * cannot shift the boundary. A timed-out or aborted command is killed with the shell's process
 * group; the shell that `exit`ed or was killed is started again on the next call in the last
 * known cwd with the last known exported variables (functions and unexported variables are lost),
 * and the result says so.
 */
export class PersistentShell {
  private process?: ShellProcess;
  private call?: Call;
  /** The restore script the last finished call printed: cwd and exported variables. */
  private state?: string;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  /** Why the shell was lost between calls (a background `kill $$`), told with the next result. */
  private lostBetweenCalls = false;
  private called = false;

  constructor(
    private readonly start: ShellStarter,
    private readonly options: PersistentShellOptions = {},
  ) {}

  /** Run one command; calls made while one runs wait their turn. */
  run(command: string, options: ExecOptions & { cwd?: string } = {}): Promise<ShellResult> {
    const turn = this.queue.then(() => this.runNow(command, options));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Kill the shell (the sandbox is going away; `kill: false` when that ends it anyway); later calls fail. */
  dispose(kill = true): void {
    this.disposed = true;
    if (kill) this.process?.kill();
    this.process = undefined;
    this.call?.fail(new SandboxError('the sandbox was disposed while the command ran', { code: 'disposed' }));
  }

  /**
   * The backend ended the shell between calls (Docker restarted its container): the next call
   * starts a new one and says so, without waiting for the old one's end to be reported.
   */
  forget(): void {
    if (this.call || !this.process) return;
    this.process = undefined;
    this.lostBetweenCalls = !this.disposed && this.called;
  }

  private runNow(command: string, options: ExecOptions): Promise<ShellResult> {
    if (this.disposed) return Promise.reject(new Error('the shell was disposed'));
    if (options.signal?.aborted) {
      return Promise.resolve({ exitCode: 130, stdout: '', stderr: '', timedOut: false, aborted: true, shell: 'kept' });
    }
    const restarted = this.process === undefined && (this.state !== undefined || this.lostBetweenCalls);
    this.lostBetweenCalls = false;
    this.called = true;
    const shell = this.process ?? this.spawn();
    const [first, second] = newNonce();
    const nonce = first + second;
    const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    return new Promise<ShellResult>((resolve, reject) => {
      const timer = setTimeout(
        () => this.stop('timeout'),
        Math.min(options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, MAX_TIMER_MS),
      );
      // The spawn host's channel does not hold this process open: the call does, until it ends.
      const hold = setInterval(() => {}, 60_000);
      const onAbort = () => this.stop('abort');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        clearInterval(hold);
        options.signal?.removeEventListener('abort', onAbort);
        this.call = undefined;
      };
      this.call = {
        nonce,
        stdout: new MarkedStream(Buffer.from(`${nonce} `), limit),
        stderr: new MarkedStream(Buffer.from(`${nonce}\n`), limit),
        started: performance.now(),
        finish: (result) => {
          settle();
          resolve(restarted ? { ...result, restored: true } : result);
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      };
      shell.write(callText(command, [first, second], options.cwd));
    });
  }

  private spawn(): ShellProcess {
    const shell = this.start({
      stdout: (chunk) => this.onOutput('stdout', chunk),
      stderr: (chunk) => this.onOutput('stderr', chunk),
      exit: (code, error) => this.onExit(shell, code, error),
    });
    this.process = shell;
    shell.write(SHELL_BOOT + (this.state === undefined ? '' : restoreText(this.state)));
    return shell;
  }

  private stop(reason: 'timeout' | 'abort'): void {
    const { call, process } = this;
    if (!call || call.stop || !process) return;
    call.stop = reason;
    process.kill();
    // A kill that never lands (an engine that keeps the stream open) must not hold the call forever.
    setTimeout(() => {
      if (this.call === call) this.onExit(process, 137);
    }, this.options.killGraceMs ?? KILL_GRACE_MS).unref();
  }

  private onOutput(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const call = this.call;
    // Between calls only background jobs write; that output belongs to no call.
    if (!call) return;
    call[stream].push(chunk);
    if (!call.stdout.found || !call.stderr.found) return;
    const epilogue = parseEpilogue(call.stdout.after!, call.nonce);
    if (!epilogue) return;
    this.state = epilogue.state;
    call.finish(this.result(call, epilogue.status, 'kept'));
  }

  private onExit(shell: ShellProcess, code: number, error?: string): void {
    // A shell given up on (disposed, or its kill never reported) ends later: nothing waits for it.
    if (this.process !== shell) return;
    this.process = undefined;
    const call = this.call;
    if (!call) {
      // A shell warmed up and lost before any call held nothing the model could miss.
      this.lostBetweenCalls = !this.disposed && this.called;
      return;
    }
    if (error !== undefined && call.stop === undefined) {
      // The shell could not run or its carrier died (spawn host, container): a fault, not the command's result.
      call.fail(new SandboxError(`the sandbox's shell ended: ${error}`, { code: 'exec_failed', retryable: true }));
      return;
    }
    call.stdout.flush();
    call.stderr.flush();
    const exitCode = call.stop === 'timeout' ? 124 : call.stop === 'abort' ? 130 : code;
    call.finish(this.result(call, exitCode, 'restarted'));
  }

  private result(call: Call, exitCode: number, shell: 'kept' | 'restarted'): ShellResult {
    return {
      exitCode,
      stdout: call.stdout.output.text(),
      stderr: call.stderr.output.text(),
      timedOut: call.stop === 'timeout',
      ...(call.stop === 'abort' ? { aborted: true } : {}),
      durationMs: Math.round(performance.now() - call.started),
      shell,
    };
  }
}
