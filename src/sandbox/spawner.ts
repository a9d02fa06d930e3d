import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SandboxError } from '../errors.js';
import type { NamespaceSpec } from './namespace-session.js';
import type { CommandRequest, CommandResult } from './process-group.js';
import type { ShellHandlers, ShellProcess } from './persistent-shell.js';
import type { HostReply, HostRequest } from './spawn-host.js';
import { baseEnvironment } from './scrub-environment.js';

interface Pending {
  resolve(result: CommandResult | undefined): void;
  reject(error: Error): void;
  onStart?: (pid: number) => void;
  /** What failed, for the error message. */
  action: string;
}

/**
 * The parent side of the spawn host (see spawn-host.ts): one host process per thread, started on
 * the first command and again after it dies. It is unref'd while idle so it never keeps a
 * finished program alive.
 */
class Spawner {
  private host?: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Persistent shells: they do not hold this process open (their sandbox's dispose ends them). */
  private readonly shells = new Map<number, ShellHandlers & { onStart?: (pid: number) => void }>();

  run(
    request: CommandRequest,
    hooks: { signal?: AbortSignal; onStart?: (pid: number) => void; session?: string } = {},
  ): Promise<CommandResult> {
    const host = this.ensureHost();
    const id = this.nextId++;
    return new Promise<CommandResult>((resolve, reject) => {
      const onAbort = () => this.send(host, { type: 'abort', id });
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        hooks.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        this.holdOpen(host);
      };
      this.pending.set(id, {
        action: 'cannot run bash',
        onStart: hooks.onStart,
        resolve: (result) => {
          settle();
          resolve(result!);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.holdOpen(host);
      this.send(host, { type: 'run', id, request, ...(hooks.session !== undefined ? { session: hooks.session } : {}) });
      if (hooks.signal?.aborted) onAbort();
    });
  }

  /** Open or close a sandbox's namespaces in the host; resolves when the host says it is done. */
  control(
    message: { type: 'open'; session: string; spec: NamespaceSpec } | { type: 'close'; session: string },
  ): Promise<void> {
    const host = this.ensureHost();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        this.pending.delete(id);
        this.holdOpen(host);
      };
      this.pending.set(id, {
        action: `cannot ${message.type} sandbox ${message.session}`,
        resolve: () => {
          settle();
          resolve();
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.holdOpen(host);
      this.send(host, { ...message, id });
    });
  }

  /** Start a persistent shell (`request.command`, stdin kept open) in the host or in `session`. */
  openShell(
    request: CommandRequest,
    handlers: ShellHandlers & { onStart?: (pid: number) => void; session?: string },
  ): ShellProcess {
    const host = this.ensureHost();
    const id = this.nextId++;
    this.shells.set(id, handlers);
    const session = handlers.session;
    this.send(host, { type: 'shell', id, request, ...(session !== undefined ? { session } : {}) });
    // A fresh host is ref'd: unref it unless commands run (the shell's caller holds the process open).
    this.holdOpen(host);
    return {
      write: (text) => this.send(host, { type: 'input', id, data: Buffer.from(text) }),
      kill: () => this.send(host, { type: 'abort', id }),
    };
  }

  private ensureHost(): ChildProcess {
    if (this.host?.connected) return this.host;
    const host = fork(fileURLToPath(new URL('./spawn-host.js', import.meta.url)), [], {
      execArgv: [],
      // Commands can read their parent's /proc/PID/environ: the host holds no secret to show.
      env: baseEnvironment(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    host.on('message', (message: HostReply) => this.onReply(message));
    host.on('exit', (code, signal) => this.onHostExit(host, code, signal));
    host.on('error', () => {});
    this.host = host;
    return host;
  }

  private onReply(message: HostReply): void {
    const shell = this.shells.get(message.id);
    if (shell) {
      if (message.type === 'output') shell[message.stream](Buffer.from(message.data));
      else if (message.type === 'started') shell.onStart?.(message.pid);
      else if (message.type === 'exited') {
        this.shells.delete(message.id);
        shell.exit(message.code, message.error);
      }
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (message.type === 'started') pending.onStart?.(message.pid);
    else if (message.type === 'done') pending.resolve(message.result);
    else if (message.type === 'opened' || message.type === 'closed') pending.resolve(undefined);
    else if (message.type === 'failed')
      pending.reject(
        new SandboxError(`${pending.action}: ${message.message}`, {
          code: 'exec_failed',
          details: { cause: message.code },
        }),
      );
  }

  private onHostExit(host: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.host === host) this.host = undefined;
    const error = new SandboxError(
      `the process that starts sandbox commands exited (${signal ?? `code ${code}`}); the next command starts a new one`,
      {
        code: 'spawn_host_exited',
        retryable: true,
      },
    );
    for (const pending of [...this.pending.values()]) pending.reject(error);
    const shells = [...this.shells.values()];
    this.shells.clear();
    for (const shell of shells) shell.exit(137, error.message);
  }

  /** Stop the host (it kills what still runs) and wait until it has exited. */
  async close(): Promise<void> {
    const host = this.host;
    if (!host || host.exitCode !== null || host.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => host.once('exit', () => resolve()));
    // An idle host is unref'd; without this ref, waiting for its exit would not keep the
    // process alive, and a caller awaiting close() would silently never resume.
    host.ref();
    host.disconnect();
    await exited;
  }

  private send(host: ChildProcess, message: HostRequest): void {
    if (host.connected) host.send(message);
  }

  /** Keep this process alive only while commands are running. */
  private holdOpen(host: ChildProcess): void {
    const channel = host.channel as { ref?(): void; unref?(): void } | undefined;
    if (this.pending.size > 0) {
      host.ref();
      channel?.ref?.();
    } else {
      host.unref();
      channel?.unref?.();
    }
  }
}

let spawner: Spawner | undefined;

/** Run a command in a process group of its own, started by this thread's spawn host. */
export function runCommand(
  request: CommandRequest,
  hooks: { signal?: AbortSignal; onStart?: (pid: number) => void; session?: string } = {},
): Promise<CommandResult> {
  spawner ??= new Spawner();
  return spawner.run(request, hooks);
}

/** Start a persistent shell in this thread's spawn host, or in a sandbox's namespaces. */
export function openShell(
  request: CommandRequest,
  handlers: ShellHandlers & { onStart?: (pid: number) => void; session?: string },
): ShellProcess {
  spawner ??= new Spawner();
  return spawner.openShell(request, handlers);
}

/** Have the zygote in this thread's spawn host make a sandbox's namespaces; its commands then run with `session`. */
export function openSession(session: string, spec: NamespaceSpec): Promise<void> {
  spawner ??= new Spawner();
  return spawner.control({ type: 'open', session, spec });
}

/** End a sandbox's namespaces; resolves once every process in them is gone. */
export function closeSession(session: string): Promise<void> {
  spawner ??= new Spawner();
  return spawner.control({ type: 'close', session });
}

/** Stop this thread's spawn host, if one runs (when a pool drains, or a command finishes). */
export async function closeSpawner(): Promise<void> {
  await spawner?.close();
}
