import { posix } from 'node:path';
import type { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { errorMessage, SandboxError } from '../errors.js';
import { delay, withEngineRetry } from './docker-engine.js';
import { ExecDemultiplexer } from './docker-demux.js';
import { containerGone, exitCodeOf } from './docker-exec-status.js';
import { endTree } from './docker-kill.js';
import type { ExecTarget } from './docker-exec-target.js';
import { CappedOutput } from './docker-output.js';
import { couldNotFork, withRestartNote } from './docker-restart.js';
import {
  engage,
  environmentEntries,
  exportable,
  type Standby,
  StartAcknowledgement,
  standbyRequest,
} from './docker-standby.js';
import { DEFAULT_EXEC_TIMEOUT_MS, type ExecOptions, type ExecResult } from './sandbox.js';
import { scrubEnvironment } from './scrub-environment.js';

/**
 * Every command runs in a standby (docker-standby.ts), `bash -c STANDBY traj-exec:<token>`,
 * which forks the command as `bash -c COMMAND` and exits with its status. The runtime makes each
 * exec process a session and process-group leader, so the standby leads the command's whole tree
 * and stays findable by its `$0` until the command ends.
 */

/** Attempts when the runtime could not start a process (e.g. every pid slot taken). */
const START_ATTEMPTS = 5;

export async function runDockerCommand(target: ExecTarget, command: string, options: ExecOptions): Promise<ExecResult> {
  if (options.signal?.aborted)
    return { exitCode: 130, stdout: '', stderr: '', timedOut: false, aborted: true, durationMs: 0 };
  const cwd = posix.resolve(target.workdir, options.cwd ?? '.');
  if (command.includes('\0') || cwd.includes('\0'))
    throw new SandboxError(
      `a command and its working directory cannot contain a NUL byte (sandbox ${target.sandboxId})`,
      {
        code: 'invalid_command',
      },
    );
  const env = scrubEnvironment({ ...target.env, ...options.env });
  try {
    return await target.limiter(() => runWithRetries(target, command, cwd, env, options));
  } finally {
    // The next command's process starts now, while the model thinks.
    target.standbys.refill();
  }
}

async function runWithRetries(
  target: ExecTarget,
  command: string,
  cwd: string,
  env: Record<string, string>,
  options: ExecOptions,
): Promise<ExecResult> {
  const started = performance.now();
  let restarted = false;
  for (let attempt = 1; ; attempt++) {
    await target.restarter.settled();
    const outcome = await runOnce(target, command, cwd, env, options);
    if ('result' in outcome) {
      const result = await noteRestart(target, outcome.result, restarted || outcome.restarted);
      return { ...result, durationMs: Math.round(performance.now() - started) };
    }
    if (outcome.cwdMissing) {
      throw new SandboxError(`working directory '${options.cwd}' does not exist in sandbox ${target.sandboxId}`, {
        code: 'cwd_missing',
      });
    }
    // The command never started, so it may run again in the restarted container.
    const giveUp = attempt >= START_ATTEMPTS || outcome.forkFailed;
    if (giveUp && !restarted && (await target.restarter.restartIfPidsExhausted())) {
      restarted = true;
      continue;
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
}

/**
 * The result with the restart note when the container was restarted around the command, or is
 * now because the command could not fork and every pid stays taken (a bomb left running).
 */
async function noteRestart(target: ExecTarget, result: ExecResult, restarted: boolean): Promise<ExecResult> {
  const restart = restarted || (couldNotFork(result) && (await target.restarter.restartIfPidsExhausted()));
  return restart ? { ...result, stderr: withRestartNote(result.stderr) } : result;
}

/**
 * The command's result (`restarted`: the container was restarted while it ran), or why it never
 * started: its working directory is missing, the runtime could not start its standby (the
 * runtime's message), or the standby's fork failed.
 */
type Outcome =
  | { result: ExecResult; restarted: boolean }
  | { runtimeFailure: string; forkFailed: boolean; cwdMissing?: boolean };

async function runOnce(
  target: ExecTarget,
  command: string,
  cwd: string,
  env: Record<string, string>,
  options: ExecOptions,
): Promise<Outcome> {
  const generation = target.restarter.generation;
  const mode = options.stdin === undefined ? 'run' : 'feed';
  const { standby, request } = await standbyFor(target, mode, command, cwd, env);
  const { exec, stream, token } = engage(standby);
  const limit = options.maxOutputBytes ?? target.maxOutputBytes;
  const stdout = new CappedOutput(limit);
  const stderr = new CappedOutput(limit);
  const acknowledgement = new StartAcknowledgement();
  // Errors end the pipeline early (a stream destroyed after the kill); what arrived is kept.
  const reading = pipeline(stream, new ExecDemultiplexer(stderr), acknowledgement, stdout).catch(() => {});
  stream.write(request);
  // Past the request, stdin is the command's: its bytes, then end-of-file.
  if (options.stdin !== undefined) stream.end(Buffer.from(options.stdin));

  const ending = await awaitEnd(target, { exec, token, stream, reading }, options, generation);
  const stopped = ending.timedOut || ending.aborted || ending.restarted;
  if (!stopped && acknowledgement.state !== 'started') {
    const said = `${stdout.text()}${stderr.text()}`.trim();
    return {
      runtimeFailure: said === '' ? 'the process ended before the command started' : said,
      forkFailed: false,
      cwdMissing: acknowledgement.state === 'cwd_missing',
    };
  }
  const exitCode = await exitCodeAfter(target, exec, ending);
  if (exitCode === undefined) {
    throw new SandboxError(`the engine never reported an exit code for a command in sandbox ${target.sandboxId}`, {
      code: 'exec_failed',
      retryable: true,
    });
  }
  const errors = stderr.text();
  // Only the standby's messages start with its $0: its one fork, of the command, failed.
  if (errors.includes(`traj-exec:${token}: fork: Resource temporarily unavailable`))
    return { runtimeFailure: errors, forkFailed: true };
  const { timedOut, aborted, restarted } = ending;
  return {
    result: { exitCode, stdout: stdout.text(), stderr: errors, timedOut, ...(aborted ? { aborted: true } : {}) },
    restarted,
  };
}

/**
 * The command's standby and request: the one started ahead when the standby can export the
 * environment (exportable()), else one of its own with the environment in its process.
 */
async function standbyFor(
  target: ExecTarget,
  mode: 'run' | 'feed',
  command: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ standby: Standby; request: Buffer }> {
  try {
    if (exportable(env))
      return {
        standby: await target.standbys.claim(),
        request: standbyRequest(mode, cwd, command, environmentEntries(env)),
      };
    const standby = await target.standbys.startOwn(environmentEntries(env));
    return { standby, request: standbyRequest(mode, cwd, command, []) };
  } catch (error) {
    throw execError(target, error);
  }
}

/** As GNU timeout: 124 after a timeout. A killed command reports 137 (128 + SIGKILL). */
async function exitCodeAfter(target: ExecTarget, exec: Docker.Exec, ending: Ending): Promise<number | undefined> {
  if (ending.timedOut) return 124;
  if (ending.restarted) return 137;
  const reported = await exitCodeOf(exec, ending.aborted ? 10 : 40).catch((error: unknown) => {
    throw execError(target, error);
  });
  return reported ?? (ending.aborted ? 137 : undefined);
}

interface Ending {
  timedOut: boolean;
  aborted: boolean;
  /** The container was restarted while the command ran (to end this command's tree, or another's). */
  restarted: boolean;
}

/** A started command: its standby's exec and token, its output and the reading of it. */
interface Running {
  exec: Docker.Exec;
  token: string;
  stream: Duplex;
  reading: Promise<void>;
}

/** Wait for the command's output to end; at its timeout or abort, end its tree first (endTree). */
async function awaitEnd(
  target: ExecTarget,
  { exec, token, stream, reading }: Running,
  options: ExecOptions,
  generation: number,
): Promise<Ending> {
  const ending: Ending = { timedOut: false, aborted: false, restarted: false };
  let stopping: Promise<void> | undefined;
  const stop = (reason: 'timedOut' | 'aborted') => {
    ending[reason] = true;
    stopping ??= endTree(target, exec, token, stream);
  };
  const timer = setTimeout(() => stop('timedOut'), options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
  const onAbort = () => stop('aborted');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await reading;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  await stopping;
  ending.restarted = target.restarter.generation !== generation;
  return ending;
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
    await target.restarter.settled();
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
