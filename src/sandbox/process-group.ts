import { spawn } from 'node:child_process';
import { CappedBuffer } from './capped-buffer.js';
import { DEFAULT_EXEC_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_BYTES } from './sandbox.js';

/** How long to wait for output pipes after bash exits: a background job may hold them open forever. */
const PIPE_DRAIN_MS = 200;
/** Node fires longer timers at once; about 24 days is "no timeout" in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One `bash -c` command to run in a process group of its own (plain data: it crosses IPC). */
export interface CommandRequest {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin?: string | Buffer;
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** A persistent shell: stdin stays open for `write` after `stdin` was fed (see persistent-shell.ts). */
  keepStdin?: boolean;
  /** With keepStdin: run this program directly instead of `bash -c command` (one process start less). */
  argv?: string[];
}

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted?: boolean;
}

/** A command started somewhere (a host child process, or a job of a namespace's init). */
export interface StartedCommand {
  readonly pid?: number;
  readonly stdout: NodeJS.ReadableStream & { destroy(): void };
  readonly stderr: NodeJS.ReadableStream & { destroy(): void };
  /** Kill the command's whole process group. */
  killGroup(): void;
  /** More stdin, for a command started with keepStdin. */
  write(data: Buffer): void;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  once(event: 'error', listener: (error: Error) => void): void;
}

export type Launcher = (request: CommandRequest) => StartedCommand;

/** `bash -c` as the leader of a new process group of this host, fed its stdin. */
export const launchOnHost: Launcher = (request) => {
  const [program, ...args] = request.argv ?? ['bash', '-c', request.command];
  const child = spawn(program!, args, {
    cwd: request.cwd,
    env: request.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // A command that never reads its stdin closes the pipe early; that is not an error.
  child.stdin.on('error', () => {});
  if (request.keepStdin) {
    if (request.stdin !== undefined) child.stdin.write(request.stdin);
  } else {
    child.stdin.end(request.stdin ?? '');
  }
  return Object.assign(child, {
    killGroup: () => {
      if (child.pid !== undefined) killProcessGroup(child.pid);
    },
    write: (data: Buffer) => {
      if (child.stdin.writable) child.stdin.write(data);
    },
  });
};

/**
 * Run a command as the leader of a new process group, so a timeout or an abort kills it and
 * everything it started. Resolves once bash has exited and its output pipes drained (or the
 * drain grace passed: a background job may keep them open).
 */
export function runInProcessGroup(
  request: CommandRequest,
  hooks: { signal?: AbortSignal; onStart?: (pid: number) => void } = {},
  launch: Launcher = launchOnHost,
): Promise<CommandResult> {
  const child = launch(request);
  if (child.pid !== undefined) hooks.onStart?.(child.pid);
  const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new CappedBuffer(limit);
  const stderr = new CappedBuffer(limit);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      child.killGroup();
    },
    Math.min(request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, MAX_TIMER_MS),
  );
  const onAbort = () => {
    aborted = true;
    child.killGroup();
  };
  hooks.signal?.addEventListener('abort', onAbort, { once: true });

  return new Promise<CommandResult>((resolvePromise, rejectPromise) => {
    const cleanup = () => {
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (error) => {
      cleanup();
      rejectPromise(error);
    });
    child.once('exit', (code, signal) => {
      cleanup();
      const finish = () => {
        child.stdout.destroy();
        child.stderr.destroy();
        resolvePromise({
          exitCode: exitCodeOf(code, signal, timedOut),
          stdout: stdout.text(),
          stderr: stderr.text(),
          timedOut,
          ...(aborted ? { aborted: true } : {}),
        });
      };
      waitForPipes(child.stdout, child.stderr, PIPE_DRAIN_MS).then(finish, finish);
    });
  });
}

export function processGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM still means the group exists; only ESRCH says it is gone.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function killProcessGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGPIPE: 13,
  SIGTERM: 15,
};

/** Shell conventions: 124 for a timeout (as GNU `timeout`), 128 + n for a death by signal n. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null, timedOut: boolean): number {
  if (timedOut) return 124;
  if (code !== null) return code;
  return 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 0) : 0);
}

export function waitForPipes(
  stdout: NodeJS.ReadableStream,
  stderr: NodeJS.ReadableStream,
  graceMs: number,
): Promise<void> {
  const ended = (stream: NodeJS.ReadableStream) =>
    new Promise<void>((done) => {
      if ((stream as { readableEnded?: boolean }).readableEnded) return done();
      stream.once('end', done);
      stream.once('close', done);
    });
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((done) => {
    timer = setTimeout(done, graceMs);
  });
  return Promise.race([Promise.all([ended(stdout), ended(stderr)]).then(() => undefined), grace]).finally(() =>
    clearTimeout(timer),
  );
}
