import type { BwrapStatus } from './bwrap.js';

/** Where an agent's commands run and its files live. One per rollout; disposed in `finally`. */
export interface ExecOptions {
  /** Kill the command's whole process tree after this long (default 120 s). */
  timeoutMs?: number;
  /** Working directory, relative to the sandbox workdir or absolute inside the sandbox. */
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string | Buffer;
  signal?: AbortSignal;
  /** Cap on captured stdout and stderr each (default 10 MB); the rest is dropped and noted. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** True when the command was stopped by an abort signal. */
  aborted?: boolean;
  durationMs?: number;
}

/** A command's result in the sandbox's persistent shell. */
export interface ShellResult extends ExecResult {
  /**
   * 'kept': the shell lives on with this command's effects. 'restarted': the command ended the
   * shell (`exit`, `set -e`, a timeout or an abort killed it); the next call gets a new one in the
   * last known cwd with the last known exported variables (functions and other variables are lost).
   */
  shell: 'kept' | 'restarted';
  /** True when this command ran in such a new shell (the previous one ended after its call). */
  restored?: boolean;
}

export interface Sandbox {
  readonly id: string;
  /** Absolute path inside the sandbox where commands start. */
  readonly workdir: string;
  /** 'local' or 'docker'. */
  readonly kind: string;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /**
   * Run a command in the sandbox's one long-lived bash (started on first use, killed by dispose):
   * cd, variables and functions carry over to the next call; stdin is empty; calls run one at a
   * time. `cwd` makes the shell cd there first (and it stays there). `env` and `stdin` are ignored.
   */
  execInShell(command: string, options?: ExecOptions): Promise<ShellResult>;
  /**
   * The confinement check every file tool goes through: the absolute path commands see for a
   * path relative to the workdir or absolute, or a SandboxError (code path_escape) when it leaves
   * the sandbox (`..`, an absolute path outside, a symlink pointing out).
   */
  resolvePath(path: string): Promise<string>;
  /**
   * A regular file's bytes. Refused without blocking: a FIFO, socket or device; refused unread: a
   * file over `maxBytes` (default 32 MiB), so a tool's memory is bounded whatever the file.
   */
  readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string): Promise<void>;
  /** Copy a host file or directory into the sandbox. */
  upload(localPath: string, remotePath: string): Promise<void>;
  /** Copy a sandbox file or directory to the host. */
  download(remotePath: string, localPath: string): Promise<void>;
  /** Idempotent; never throws for an already disposed sandbox. */
  dispose(): Promise<void>;
}

/** A service beside a docker sandbox's own container (a docker-compose.yaml service other than `main`). */
export interface SidecarService {
  name: string;
  image: string;
  command?: string[];
  environment?: Record<string, string>;
}

export interface SandboxOptions {
  kind: 'local' | 'docker';
  /** Docker image (docker backend). */
  image?: string;
  /** Working directory inside the sandbox (docker default /app; local: a fresh temp folder). */
  workdir?: string;
  /**
   * Local backend: work in this existing folder (chat and ask --workdir) instead of a fresh temporary one; never
   * deleted.
   */
  hostFolder?: string;
  /** Labels for leak cleanup: the run name and the prompt key. */
  run?: string;
  key?: string;
  /** Extra environment for every command. */
  env?: Record<string, string>;
  /** Backend-specific settings (docker isolation limits, …). */
  docker?: Record<string, unknown>;
  /** Docker: containers beside the sandbox's own on a private network (a task's docker-compose.yaml services). */
  services?: SidecarService[];
  /**
   * Docker: spare started containers this thread keeps for the image (a run sets it from its
   * concurrency over its worker threads); 0 or unset: every sandbox starts its own container.
   * Ignored with `services`.
   */
  warm?: number;
  /** Local backend settings: isolation (bwrap|none|auto), network, pids_limit (local-config.ts). */
  local?: Record<string, unknown>;
  /**
   * Local backend: what bubblewrap can do here, when the caller already probed it (a run probes
   * once in its main thread); without it the sandbox probes itself, once per thread.
   */
  bwrap?: BwrapStatus;
}

export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
