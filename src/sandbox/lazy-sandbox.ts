import type { ExecOptions, ExecResult, Sandbox, ShellResult } from './sandbox.js';

/**
 * A sandbox created on first use. Rollouts that never call a tool (a large share of many
 * datasets) then pay nothing for one: no temp folder, no container.
 */
export class LazySandbox implements Sandbox {
  private created?: Promise<Sandbox>;
  private real?: Sandbox;
  private disposed = false;
  /** Why creation failed: an infrastructure fault, never something the model should read and fix. */
  createError?: unknown;

  constructor(
    private readonly create: () => Promise<Sandbox>,
    readonly kind: string,
    private readonly requestedWorkdir: string,
    private readonly onCreateError: (error: unknown) => void = () => {},
  ) {}

  get id(): string {
    return this.real?.id ?? 'lazy:not-created';
  }

  /** The real workdir once created; until then the one asked for. */
  get workdir(): string {
    return this.real?.workdir ?? this.requestedWorkdir;
  }

  /** The real sandbox, created now if it was not yet. */
  materialize(): Promise<Sandbox> {
    if (this.disposed) return Promise.reject(new Error('the sandbox was disposed'));
    this.created ??= this.create().then(
      (sandbox) => (this.real = sandbox),
      (error: unknown) => {
        this.createError = error;
        this.onCreateError(error);
        throw error;
      },
    );
    return this.created;
  }

  get wasCreated(): boolean {
    return this.created !== undefined;
  }

  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    return (await this.materialize()).exec(command, options);
  }

  async execInShell(command: string, options?: ExecOptions): Promise<ShellResult> {
    return (await this.materialize()).execInShell(command, options);
  }

  async resolvePath(path: string): Promise<string> {
    return (await this.materialize()).resolvePath(path);
  }

  async readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer> {
    return (await this.materialize()).readFile(path, options);
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    return (await this.materialize()).writeFile(path, data);
  }

  async upload(localPath: string, remotePath: string): Promise<void> {
    return (await this.materialize()).upload(localPath, remotePath);
  }

  async download(remotePath: string, localPath: string): Promise<void> {
    return (await this.materialize()).download(remotePath, localPath);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const created = this.created;
    if (!created) return;
    await (await created.catch(() => undefined))?.dispose();
  }
}
