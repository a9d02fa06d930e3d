import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import type { LimitFunction } from 'p-limit';
import { errorMessage, SandboxError } from '../errors.js';
import { delay, withEngineRetry } from './docker-engine.js';
import { ExecDemultiplexer } from './docker-demux.js';
import { CappedOutput } from './docker-output.js';
import { DEFAULT_EXEC_TIMEOUT_MS, type ExecOptions, type ExecResult } from './sandbox.js';
import { scrubEnvironment } from './scrub-environment.js';

/**
 * Every command runs as `bash -c WRAPPER traj-exec:<token> COMMAND`. The runtime makes each exec
 * process a session and process-group leader, so the wrapper leads the command's whole tree;
 * it forks the command instead of exec'ing it (the trailing `exit`), so it stays findable by
 * its `$0` until the command ends.
 */
const WRAPPER = 'bash -c "$1"; exit $?';

/**
 * Kills the tree of the wrapper whose `$0` is `traj-exec:$1`: its process group in one
 * kill(2) (atomic against a fork bomb), then stragglers that moved to another group of the
 * same session. Only bash builtins: under a fork bomb the one slot this script gets is all it has.
 * Processes that start a session of their own (daemons) escape, as with GNU `timeout`.
 */
const KILL_SCRIPT = `target="traj-exec:$1"
for proc in /proc/[0-9]*; do
  mapfile -d '' -t argv 2>/dev/null < "$proc/cmdline" || continue
  [ "\${argv[3]-}" = "$target" ] || continue
  leader=\${proc#/proc/}
  kill -KILL -- "-$leader" 2>/dev/null
  for other in /proc/[0-9]*; do
    read -r stat 2>/dev/null < "$other/stat" || continue
    fields=(\${stat##*\\) })
    [ "\${fields[3]-}" = "$leader" ] && kill -KILL "\${other#/proc/}" 2>/dev/null
  done
done
exit 0`;

/** After the kill, how long the engine may take to close the output stream before we do. */
const STREAM_CLOSE_GRACE_MS = 3_000;
/** Attempts when the runtime could not start a process (e.g. every pid slot taken). */
const START_ATTEMPTS = 5;
const RUNTIME_FAILURE = /OCI runtime exec failed|unable to start container process/;

export interface ExecTarget {
  container: Docker.Container;
  sandboxId: string;
  workdir: string;
  /** The sandbox's own environment (options.env), already free of secrets. */
  env: Record<string, string>;
  maxOutputBytes: number;
  limiter: LimitFunction;
}

export async function runDockerCommand(target: ExecTarget, command: string, options: ExecOptions): Promise<ExecResult> {
  if (options.signal?.aborted)
    return { exitCode: 130, stdout: '', stderr: '', timedOut: false, aborted: true, durationMs: 0 };
  const cwd = posix.resolve(target.workdir, options.cwd ?? '.');
  const env = Object.entries(scrubEnvironment({ ...target.env, ...options.env })).map(
    ([name, value]) => `${name}=${value}`,
  );
  return target.limiter(async () => {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      const outcome = await runOnce(target, command, cwd, env, options);
      if ('result' in outcome) return { ...outcome.result, durationMs: Math.round(performance.now() - started) };
      if (/chdir to cwd/.test(outcome.runtimeFailure)) {
        throw new SandboxError(`working directory '${options.cwd}' does not exist in sandbox ${target.sandboxId}`, {
          code: 'cwd_missing',
        });
      }
      if (attempt >= START_ATTEMPTS) {
        throw new SandboxError(
          `the container runtime could not start a command in sandbox ${target.sandboxId}: ${outcome.runtimeFailure.trim()}`,
          {
            code: 'exec_failed',
            retryable: true,
          },
        );
      }
      await delay(200 * attempt);
    }
  });
}

/** The command's result, or the runtime's message when it never started (exit 126, an OCI error). */
type Outcome = { result: ExecResult } | { runtimeFailure: string };

async function runOnce(
  target: ExecTarget,
  command: string,
  cwd: string,
  env: string[],
  options: ExecOptions,
): Promise<Outcome> {
  const token = randomBytes(8).toString('hex');
  const stdin = options.stdin === undefined ? undefined : Buffer.from(options.stdin);
  const exec = await withEngineRetry(() =>
    target.container.exec({
      Cmd: ['bash', '-c', WRAPPER, `traj-exec:${token}`, command],
      Env: env,
      WorkingDir: cwd,
      AttachStdin: stdin !== undefined,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    }),
  ).catch((error: unknown) => {
    throw execError(target, error);
  });
  // Not retried: once started, the command may have had effects.
  const stream = (await exec
    .start({ hijack: stdin !== undefined, stdin: stdin !== undefined })
    .catch((error: unknown) => {
      throw execError(target, error);
    })) as Duplex;
  const limit = options.maxOutputBytes ?? target.maxOutputBytes;
  const stdout = new CappedOutput(limit);
  const stderr = new CappedOutput(limit);
  // Errors end the pipeline early (a stream destroyed after the kill); what arrived is kept.
  const reading = pipeline(stream, new ExecDemultiplexer(stderr), stdout).catch(() => {});
  if (stdin !== undefined) {
    // A command that exits without reading its stdin closes the pipe early; not an error.
    stream.on('error', () => {});
    stream.end(stdin);
  }

  let timedOut = false;
  let aborted = false;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= killTree(target, token).finally(() => {
      if (stream.destroyed) return;
      const force = setTimeout(() => stream.destroy(), STREAM_CLOSE_GRACE_MS);
      force.unref();
      stream.once('close', () => clearTimeout(force));
    });
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await reading;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  await stopping;

  // As GNU timeout: 124 after a timeout. A killed command reports 137 (128 + SIGKILL).
  const reported = timedOut
    ? 124
    : await exitCodeOf(exec, aborted ? 10 : 40).catch((error: unknown) => {
        throw execError(target, error);
      });
  const exitCode = reported ?? (aborted ? 137 : undefined);
  if (exitCode === undefined) {
    throw new SandboxError(`the engine never reported an exit code for a command in sandbox ${target.sandboxId}`, {
      code: 'exec_failed',
      retryable: true,
    });
  }
  const output = stdout.bytes().toString('utf8');
  if (exitCode === 126 && RUNTIME_FAILURE.test(output)) return { runtimeFailure: output };
  return {
    result: { exitCode, stdout: stdout.text(), stderr: stderr.text(), timedOut, ...(aborted ? { aborted: true } : {}) },
  };
}

function streamClosed(stream: Duplex): Promise<void> {
  return new Promise((done) => {
    if (stream.destroyed || stream.readableEnded) return done();
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', () => done());
  });
}

/** The exit code, once the engine has noticed the process ended (a few ms after the stream). */
export async function exitCodeOf(exec: Docker.Exec, polls = 40): Promise<number | undefined> {
  for (let attempt = 0; attempt < polls; attempt++) {
    const info = await withEngineRetry(() => exec.inspect());
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await delay(50);
  }
  return undefined;
}

/** Run the kill script, again while the runtime cannot start it (a fork bomb holding every pid). */
export async function killTree(target: ExecTarget, token: string): Promise<void> {
  for (let attempt = 1; attempt <= 10; attempt++) {
    try {
      const exec = await withEngineRetry(() =>
        target.container.exec({
          Cmd: ['bash', '-c', KILL_SCRIPT, 'traj-kill', token],
          AttachStdout: true,
          AttachStderr: true,
        }),
      );
      const stream = (await exec.start({})) as Duplex;
      stream.resume();
      await streamClosed(stream);
      if ((await exitCodeOf(exec)) === 0) return;
    } catch (error) {
      // A removed or stopped container has nothing left to kill; a busy runtime gets another try.
      if (containerGone(error)) return;
    }
    await delay(100 * attempt);
  }
}

function containerGone(error: unknown): boolean {
  return /no such container|no such exec|is not running/i.test(errorMessage(error));
}

export function execError(target: ExecTarget, error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const gone = containerGone(error);
  return new SandboxError(
    gone
      ? `sandbox ${target.sandboxId} has no running container any more (removed or stopped outside traj): ${errorMessage(error)}`
      : `cannot run a command in sandbox ${target.sandboxId}: ${errorMessage(error)}`,
    { code: gone ? 'container_gone' : 'exec_failed', retryable: true, cause: error },
  );
}

export interface PipedExecResult {
  exitCode: number;
  stderr: string;
}

/**
 * Run a helper program (not the model's command) with streamed stdin and stdout, e.g. `tar`
 * for files the archive endpoints cannot see. Backpressure holds end to end.
 */
export async function pipeExec(
  target: ExecTarget,
  argv: string[],
  io: { stdin?: Readable; stdout: Writable },
): Promise<PipedExecResult> {
  return target.limiter(async () => {
    const exec = await withEngineRetry(() =>
      target.container.exec({
        Cmd: argv,
        AttachStdin: io.stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      }),
    ).catch((error: unknown) => {
      throw execError(target, error);
    });
    const stream = (await exec
      .start({ hijack: io.stdin !== undefined, stdin: io.stdin !== undefined })
      .catch((error: unknown) => {
        throw execError(target, error);
      })) as Duplex;
    const stderr = new CappedOutput(64 * 1024);
    const reading = pipeline(stream, new ExecDemultiplexer(stderr), io.stdout);
    if (io.stdin) {
      io.stdin.on('error', (error) => stream.destroy(error));
      io.stdin.pipe(stream);
    }
    await reading;
    const exitCode = await exitCodeOf(exec).catch((error: unknown) => {
      throw execError(target, error);
    });
    return { exitCode: exitCode ?? -1, stderr: stderr.text() };
  });
}
