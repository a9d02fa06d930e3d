import type Docker from 'dockerode';
import { errorMessage, SandboxError } from '../errors.js';
import { withEngineRetry } from './docker-engine.js';

/** Ends the stderr of a command that met a restart, so the model knows what it lost. */
const RESTART_NOTE =
  '[traj: the container was restarted, as processes in it could not be ended from inside (every pid taken, ' +
  "as by a fork bomb, or a timed-out command's processes outliving their kill): its files are kept, but every " +
  'process running in it was killed and tmpfs mounts such as /tmp were emptied]';

/** The text of stderr with the restart note after it, on a line of its own. */
export function withRestartNote(stderr: string): string {
  return `${stderr}${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${RESTART_NOTE}\n`;
}

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

  /** The sandbox is being disposed: removing the container ends every process, so no restart is needed. */
  close(): void {
    this.closed = true;
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
