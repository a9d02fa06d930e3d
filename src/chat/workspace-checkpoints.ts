import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/sandbox.js';

/** A workspace larger than this is not copied: the checkpoint says so instead of filling the disk. */
export const CHECKPOINT_MAX_BYTES = 200_000_000;

export interface Checkpoint {
  /** 1-based: the chat's Nth message to the model; the copy is of the workspace just before it. */
  turn: number;
  label: string;
  /** The copy's folder on the host, or why there is none. */
  folder?: string;
  skipped?: string;
}

const CLEAR_WORKDIR = 'find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +';

/**
 * The chat's workspace before each message, as Hermes' checkpoints keep it, so /rollback N can
 * put the files back as they were when message N was sent. Each checkpoint is a full copy of the
 * sandbox folder on the host (in a temporary folder removed when the chat ends): simple and
 * exact, not deduplicated. Only the sandbox folder is kept: files elsewhere, processes and
 * installed packages are not.
 */
export class WorkspaceCheckpoints {
  readonly list: Checkpoint[] = [];
  private root: string | undefined;

  constructor(private readonly sandbox: Sandbox) {}

  async take(label: string): Promise<Checkpoint> {
    const checkpoint: Checkpoint = { turn: this.list.length + 1, label };
    this.list.push(checkpoint);
    const size = await this.sandbox.exec('du -sb . | cut -f1');
    const bytes = Number(size.stdout.trim());
    if (size.exitCode !== 0 || !Number.isFinite(bytes)) {
      checkpoint.skipped = `the workspace size could not be measured: ${size.stderr.trim()}`;
      return checkpoint;
    }
    if (bytes > CHECKPOINT_MAX_BYTES) {
      checkpoint.skipped = `the workspace holds ${bytes} bytes, over the ${CHECKPOINT_MAX_BYTES} bytes a checkpoint copies`;
      return checkpoint;
    }
    this.root ??= mkdtempSync(join(tmpdir(), 'traj-checkpoints-'));
    const folder = join(this.root, `turn-${checkpoint.turn}`);
    await this.sandbox.download('.', folder);
    checkpoint.folder = folder;
    return checkpoint;
  }

  /** Put the workspace back as checkpoint `turn` kept it: everything made since is removed. */
  async restore(turn: number): Promise<Checkpoint> {
    const checkpoint = this.list[turn - 1];
    if (!checkpoint) throw new Error(`no checkpoint ${turn}: there are ${this.list.length}`);
    if (!checkpoint.folder) throw new Error(`checkpoint ${turn} has no copy: ${checkpoint.skipped}`);
    const cleared = await this.sandbox.exec(CLEAR_WORKDIR);
    if (cleared.exitCode !== 0) throw new Error(`the workspace could not be cleared: ${cleared.stderr.trim()}`);
    await this.sandbox.upload(checkpoint.folder, '.');
    return checkpoint;
  }

  dispose(): void {
    if (this.root) rmSync(this.root, { recursive: true, force: true });
    this.root = undefined;
  }
}
