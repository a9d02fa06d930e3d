import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import type Docker from 'dockerode';
import { errorMessage, SandboxError } from '../errors.js';
import {
  addBuffer,
  addHostTree,
  archiveName,
  engineTransport,
  execTransport,
  extractTree,
  readSingleFile,
  sendArchive,
  type ArchiveTransport,
} from './docker-archive.js';
import {
  DEFAULT_DOCKER_IMAGE,
  memoryBytes,
  parseDockerSandboxConfig,
  type DockerSandboxConfig,
} from './docker-config.js';
import { connectDocker, engineLimiter, engineStatus, withEngineRetry } from './docker-engine.js';
import { runDockerCommand } from './docker-exec.js';
import type { ExecTarget } from './docker-exec-target.js';
import { containerLabels } from './docker-labels.js';
import { startServices, type ServiceGroup } from './docker-services.js';
import { type Standby, startStandby } from './docker-standby.js';
import { StandbySlot } from './docker-standby-slot.js';
import { takeWarmContainer, type WarmContainer } from './docker-warm-pool.js';
import { ContainerRestarter, couldNotFork, withRestartNote } from './docker-restart.js';
import { openDockerShell } from './docker-shell.js';
import { PersistentShell } from './persistent-shell.js';
import { registerLiveSandbox } from './live-sandboxes.js';
import type { ExecOptions, ExecResult, Sandbox, SandboxOptions, ShellResult } from './sandbox.js';
import { scrubEnvironment } from './scrub-environment.js';

/**
 * A sandbox that is one container: `sleep infinity` under Docker's init as PID 1, commands run
 * each in an exec started ahead of it (docker-standby.ts), files moved as tar streams. Isolation (network, limits, capabilities) comes from
 * `options.docker` (DockerSandboxConfigSchema). Host environment never reaches the container:
 * only `options.env` and each command's `env`, both scrubbed of credential-like names.
 */
export async function createDockerSandbox(options: SandboxOptions): Promise<Sandbox> {
  const config = parseDockerSandboxConfig(options.docker);
  const image = options.image ?? DEFAULT_DOCKER_IMAGE;
  const workdir = posix.resolve('/', options.workdir ?? config.workdir);
  const docker = await connectDocker();
  const env = scrubEnvironment(options.env ?? {});
  const limited = engineLimiter('create', config.create_concurrency);
  if (options.services && options.services.length > 0) {
    const group = await startServices(docker, options.services, config, containerLabels(options.run, options.key));
    try {
      const container = await limited(() =>
        startContainer(docker, { image, workdir, config, network: group.network, run: options.run, key: options.key }),
      );
      return new DockerSandbox(container, workdir, config, env, { services: group });
    } catch (error) {
      await group.remove().catch(() => {});
      throw error;
    }
  }
  const spec: ContainerSpec = { image, workdir, config, network: config.network, run: options.run, key: options.key };
  if (options.warm !== undefined && options.warm > 0) {
    // Spares are started before their rollout is known: they carry the run's labels, not a key.
    const spare = { ...spec, key: undefined };
    const warm = await takeWarmContainer(JSON.stringify([image, workdir, config, options.run]), options.warm, () =>
      limited(() => startContainer(docker, spare)).then(withStandby),
    );
    return new DockerSandbox(warm.container, workdir, config, env, { standby: warm.standby });
  }
  return new DockerSandbox(await limited(() => startContainer(docker, spec)), workdir, config, env);
}

interface ContainerSpec {
  image: string;
  workdir: string;
  config: DockerSandboxConfig;
  /** The Docker network mode: the config's, or the private network of a sandbox with sidecars. */
  network: string;
  run: string | undefined;
  key: string | undefined;
}

async function startContainer(docker: Docker, spec: ContainerSpec): Promise<Docker.Container> {
  const { image, config } = spec;
  const container = await withEngineRetry(() =>
    docker.createContainer({
      Image: image,
      Cmd: ['sleep', 'infinity'],
      // The engine creates the workdir when it starts the container.
      WorkingDir: spec.workdir,
      Env: [],
      Labels: containerLabels(spec.run, spec.key),
      HostConfig: {
        Init: true,
        NetworkMode: spec.network,
        NanoCpus: Math.round(config.cpus * 1e9),
        Memory: memoryBytes(config.memory),
        // Equal to Memory: no swap on top, so the limit is what a command can really use.
        MemorySwap: memoryBytes(config.memory),
        PidsLimit: config.pids_limit,
        SecurityOpt: config.no_new_privileges ? ['no-new-privileges'] : [],
        CapDrop: config.cap_drop,
        CapAdd: config.cap_add,
        Tmpfs: config.tmpfs,
        ...(config.storage === undefined ? {} : { StorageOpt: { size: config.storage } }),
      },
    }),
  ).catch((error: unknown) => {
    throw createError(error, image);
  });
  try {
    await withEngineRetry(() => container.start());
  } catch (error) {
    await container.remove({ force: true, v: true }).catch(() => {});
    throw new SandboxError(`container for image ${image} was created but would not start: ${errorMessage(error)}`, {
      code: 'start_failed',
      retryable: true,
      cause: error,
    });
  }
  return container;
}

/** A spare's first command's process, started with it (docker-standby.ts); without one the sandbox starts it. */
async function withStandby(container: Docker.Container): Promise<WarmContainer> {
  const standby = await startStandby(container, 0).catch(() => undefined);
  return { container, ...(standby ? { standby } : {}) };
}

function createError(error: unknown, image: string): SandboxError {
  if (engineStatus(error) === 404 && /no such image/i.test(errorMessage(error))) {
    return new SandboxError(
      `the sandbox image '${image}' is not on this Docker engine; build it offline with scripts/build-sandbox-image.sh --tag ${image} (or docker pull/load it)`,
      { code: 'image_missing', details: { image }, cause: error },
    );
  }
  return new SandboxError(`cannot create a container from image ${image}: ${errorMessage(error)}`, {
    code: 'create_failed',
    retryable: true,
    cause: error,
  });
}

/**
 * A shell's kill here may run the kill script, wait for the tree to end and restart the
 * container (endTree in docker-kill.ts), each slow on a busy engine; it always ends the shell's
 * exec, so this only guards against an engine that never answers.
 */
const SHELL_KILL_GRACE_MS = 60_000;

class DockerSandbox implements Sandbox {
  readonly id: string;
  readonly kind = 'docker';
  private disposing: Promise<void> | undefined;
  private readonly target: ExecTarget;
  private readonly engineFiles: ArchiveTransport;
  private readonly tmpfsFiles: ArchiveTransport;
  private readonly unregister: () => void;
  private readonly shell: PersistentShell;
  private readonly restarter: ContainerRestarter;
  private readonly standbys: StandbySlot;
  /** Sidecar services and their network, removed after the main container. */
  private readonly services: ServiceGroup | undefined;

  constructor(
    private readonly container: Docker.Container,
    readonly workdir: string,
    private readonly config: DockerSandboxConfig,
    env: Record<string, string>,
    extras: {
      /** Sidecar services and their network, removed after the main container. */
      services?: ServiceGroup;
      /** The first command's process, started with a warm container. */
      standby?: Standby;
    } = {},
  ) {
    this.id = `docker-${container.id.slice(0, 12)}`;
    this.services = extras.services;
    this.restarter = new ContainerRestarter(container, this.id, config.pids_limit, () => {
      this.shell.forget();
      this.standbys.forget();
    });
    this.standbys = new StandbySlot(container, this.restarter, extras.standby);
    this.target = {
      container,
      sandboxId: this.id,
      workdir,
      env,
      maxOutputBytes: config.max_output_bytes,
      limiter: engineLimiter('exec', config.exec_concurrency),
      restarter: this.restarter,
      standbys: this.standbys,
    };
    this.engineFiles = engineTransport(container, this.id);
    this.tmpfsFiles = execTransport(this.target);
    this.unregister = registerLiveSandbox(this);
    this.shell = new PersistentShell((handlers) => openDockerShell(this.target, handlers), {
      killGraceMs: SHELL_KILL_GRACE_MS,
    });
  }

  async execInShell(command: string, options: ExecOptions = {}): Promise<ShellResult> {
    this.assertLive();
    const cwd = options.cwd === undefined ? undefined : this.resolve(options.cwd);
    const generation = this.restarter.generation;
    const result = await this.shell.run(command, { ...options, cwd });
    if (this.disposing)
      throw new SandboxError(`sandbox ${this.id} was disposed while the command ran`, { code: 'disposed' });
    return this.noteRestart(result, this.restarter.generation !== generation);
  }

  /**
   * Say so when a restart under the call ended its shell (a kill could not end a tree, its own
   * or another's), or restart now when the command could not fork while nearly every pid stays
   * taken (a fork bomb left running in the shell's background), as exec does.
   */
  private async noteRestart(result: ShellResult, restarted: boolean): Promise<ShellResult> {
    const restart = restarted || (couldNotFork(result) && (await this.restarter.restartIfPidsExhausted()));
    return restart ? { ...result, stderr: withRestartNote(result.stderr), shell: 'restarted' } : result;
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertLive();
    const disposed = () =>
      new SandboxError(`sandbox ${this.id} was disposed while the command ran`, { code: 'disposed' });
    // Removing the container kills its commands; that is the sandbox ending, not the command failing.
    const result = await runDockerCommand(this.target, command, options).catch((error: unknown) => {
      throw this.disposing ? disposed() : error;
    });
    if (this.disposing) throw disposed();
    return result;
  }

  /** The whole container is the sandbox: any path in it is inside. */
  async resolvePath(path: string): Promise<string> {
    return posix.resolve(this.workdir, path);
  }

  async readFile(path: string, options: { maxBytes?: number } = {}): Promise<Buffer> {
    this.assertLive();
    const absolute = this.resolve(path);
    return this.transportFor(absolute).get(absolute, (archive) =>
      readSingleFile(archive, path, this.id, options.maxBytes),
    );
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    this.assertLive();
    const absolute = this.resolve(path);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await this.wrapWrite(
      path,
      sendArchive(this.transportFor(absolute), (pack) => addBuffer(pack, archiveName(absolute), bytes)),
    );
  }

  async upload(localPath: string, remotePath: string): Promise<void> {
    this.assertLive();
    const absolute = this.resolve(remotePath);
    await stat(localPath).catch((error: unknown) => {
      throw new SandboxError(
        `cannot upload ${localPath} to sandbox ${this.id}: no such file or directory '${localPath}'`,
        {
          code: 'not_found',
          cause: error,
        },
      );
    });
    await this.wrapWrite(
      remotePath,
      sendArchive(this.transportFor(absolute), (pack) => addHostTree(pack, archiveName(absolute), localPath)),
    );
  }

  async download(remotePath: string, localPath: string): Promise<void> {
    this.assertLive();
    const absolute = this.resolve(remotePath);
    await this.transportFor(absolute).get(absolute, (archive) => extractTree(archive, localPath));
  }

  dispose(): Promise<void> {
    this.disposing ??= this.removeContainer();
    return this.disposing;
  }

  private async removeContainer(): Promise<void> {
    this.unregister();
    // Removing the container ends the shell's exec; this only marks it as gone.
    this.shell.dispose(false);
    this.standbys.close();
    this.restarter.close();
    // A removal racing a restart under way could meet a container being started again.
    await this.restarter.settled();
    try {
      // 409: a removal is already in progress (ours, retried); wait for it to settle.
      await withEngineRetry(() => this.container.remove({ force: true, v: true }), {
        attempts: 5,
        alsoRetry: (error) => engineStatus(error) === 409,
      });
    } catch (error) {
      if (engineStatus(error) === 404) return this.removeServices();
      if (engineStatus(error) === 409 && /already in progress/i.test(errorMessage(error))) return;
      throw new SandboxError(
        `cannot remove container ${this.container.id.slice(0, 12)} of sandbox ${this.id}: ${errorMessage(error)}; 'traj sandbox prune' removes it later`,
        {
          code: 'dispose_failed',
          retryable: true,
          cause: error,
        },
      );
    }
    await this.removeServices();
  }

  private async removeServices(): Promise<void> {
    try {
      await this.services?.remove();
    } catch (error) {
      throw new SandboxError(
        `cannot remove the sidecar services of sandbox ${this.id}: ${errorMessage(error)}; 'traj sandbox prune' removes them later`,
        { code: 'dispose_failed', retryable: true, cause: error },
      );
    }
  }

  private resolve(path: string): string {
    const absolute = posix.resolve(this.workdir, path);
    if (absolute === '/')
      throw new SandboxError(`'${path}' names the container's root; name a file or folder inside it`, {
        code: 'invalid_path',
      });
    return absolute;
  }

  /** tmpfs mounts are invisible to the archive endpoints: those paths go through tar in the container. */
  private transportFor(absolute: string): ArchiveTransport {
    const onTmpfs = Object.keys(this.config.tmpfs).some(
      (mount) => absolute === mount || absolute.startsWith(`${mount.replace(/\/+$/, '')}/`),
    );
    return onTmpfs ? this.tmpfsFiles : this.engineFiles;
  }

  private async wrapWrite(path: string, writing: Promise<void>): Promise<void> {
    try {
      await writing;
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      const gone = /no such container/i.test(errorMessage(error));
      throw new SandboxError(`cannot write '${path}' in sandbox ${this.id}: ${errorMessage(error)}`, {
        code: gone ? 'container_gone' : 'write_failed',
        retryable: gone,
        cause: error,
      });
    }
  }

  private assertLive(): void {
    if (this.disposing) throw new SandboxError(`sandbox ${this.id} is already disposed`, { code: 'disposed' });
  }
}
