import type Docker from 'dockerode';
import { errorMessage, SandboxError } from '../errors.js';
import { delay, withEngineRetry } from './docker-engine.js';
import type { ExecResult } from './sandbox.js';

/** Ends the stderr of a command that met a restart, so the model knows what it lost. */
const RESTART_NOTE =
  '[traj: the container was restarted, as processes in it could not be ended from inside (every pid taken, ' +
  "as by a fork bomb, or a timed-out command's processes outliving their kill): its files are kept, but every " +
  'process running in it was killed and tmpfs mounts such as /tmp were emptied]';

/** The text of stderr with the restart note after it, on a line of its own. */
export function withRestartNote(stderr: string): string {
  return `${stderr}${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${RESTART_NOTE}\n`;
}

/** What bash says when it cannot fork: every pid of the container may be taken. */
const FORK_FAILURE = /fork: (?:retry: )?Resource temporarily unavailable/;

/**
 * A command that ended on its own but could not fork: a sign that something left running holds
 * the pids. A command stopped at its timeout or abort had its own tree ended (or the container
 * restarted): its fork failures were its own.
 */
export function couldNotFork(result: ExecResult): boolean {
  return !result.timedOut && !result.aborted && FORK_FAILURE.test(result.stderr);
}

/**
 * After a command that could not fork, samples of the container's pid count, one of which must
 * be near its limit for a restart: what holds the pids then is not that command (it ended) but
 * something left running. A fork bomb's count churns as its processes give up and others fork
 * (`ps` in the container counted from about half of the limit to all of it): one sample could
 * miss it.
 */
const PIDS_SAMPLES = 3;
const PIDS_SAMPLE_GAP_MS = 300;
const PIDS_NEAR_LIMIT = 0.9;

/**
 * The last resort against processes a kill from inside the container cannot end: a fork bomb
 * holding every pid leaves none for the kill's exec, and a tree whose leader exited is not found
 * by it. Killing the container's PID 1 makes the kernel kill everything else in its pid
 * namespace, which no number of processes can resist; starting it again keeps the container's
 * id, labels, limits and disk, so the rollout goes on. One restart at a time.
 */
export class ContainerRestarter {
  private restarting: Promise<void> | undefined;
  private closed = false;
  /** How many restarts began: a command that saw this change was killed by one. */
  generation = 0;

  constructor(
    private readonly container: Docker.Container,
    private readonly sandboxId: string,
    private readonly pidsLimit: number,
    /** Told after each restart: what lived in the old container (a persistent shell) is gone. */
    private readonly restarted: () => void = () => {},
  ) {}

  /** Resolves once no restart is under way: an exec created mid-restart would fail. */
  async settled(): Promise<void> {
    await this.restarting?.catch(() => {});
  }

  /** Restart the container, or join the restart under way. */
  restart(): Promise<void> {
    this.restarting ??= this.restartNow().finally(() => {
      this.restarting = undefined;
    });
    return this.restarting;
  }

  /**
   * Restart when nearly every pid is taken after a command could not fork (a fork bomb left
   * running by an earlier command that returned): no command can run in such a container until
   * it is. True when it restarted.
   */
  async restartIfPidsExhausted(): Promise<boolean> {
    if (!(await this.pidsExhausted())) return false;
    await this.restart();
    return true;
  }

  /** The sandbox is being disposed: removing the container ends every process, so no restart is needed. */
  close(): void {
    this.closed = true;
  }

  /**
   * Counted from the engine's side, so it needs no pid in the container: `docker top` with a row
   * per thread, as the pids limit counts them.
   */
  private async pidsExhausted(): Promise<boolean> {
    for (let sample = 1; sample <= PIDS_SAMPLES; sample++) {
      const tasks = await withEngineRetry(() => this.container.top({ ps_args: '-L -o pid,lwp' })).then(
        (top: { Processes?: unknown[] }) => top.Processes?.length,
        () => undefined,
      );
      if (tasks !== undefined && tasks >= this.pidsLimit * PIDS_NEAR_LIMIT) return true;
      if (sample < PIDS_SAMPLES) await delay(PIDS_SAMPLE_GAP_MS);
    }
    return false;
  }

  private async restartNow(): Promise<void> {
    if (this.closed) return;
    this.generation++;
    try {
      // t=0: SIGKILL at once; the init's death takes the whole pid namespace with it.
      await withEngineRetry(() => this.container.restart({ t: 0 }));
      this.restarted();
    } catch (error) {
      if (this.closed) return;
      throw new SandboxError(
        `cannot restart the container of sandbox ${this.sandboxId} to end processes that could not be ended from inside it: ${errorMessage(error)}`,
        { code: 'exec_failed', retryable: true, cause: error },
      );
    }
  }
}
