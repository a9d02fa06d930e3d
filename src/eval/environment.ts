import type { AgentResult } from '../agent/result.js';
import type { Message } from '../model/messages.js';
import type { ExecOptions, ExecResult, Sandbox } from '../sandbox/sandbox.js';

/** What a reward hook can do to the rollout's own sandbox, after the agent finished and before disposal. */
export interface RewardContext {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string): Promise<void>;
  upload(localPath: string, remotePath: string): Promise<void>;
  download(remotePath: string, localPath: string): Promise<void>;
  /** Files under a directory (default the workdir), relative paths, recursively. */
  listFiles(path?: string): Promise<string[]>;
  readonly sandbox: Sandbox;
  readonly signal: AbortSignal;
}

export type RewardOutput =
  | number
  | {
      score: number;
      /** Evidence kept in the record (e.g. which tests failed). */
      details?: unknown;
      /** Named sub-scores. */
      scores?: Record<string, number>;
    };

export interface SandboxRequest {
  kind?: 'local' | 'docker';
  image?: string;
  workdir?: string;
}

/** A prompt the agent starts from: a string (one user turn) or a conversation prefix. */
export type PromptInput = string | Message[];

/**
 * An environment: where items come from, how each becomes a prompt, what sandbox and tools the
 * agent gets, how the sandbox is prepared, and how the rollout is scored. Items must be plain
 * JSON (they cross the worker boundary); the module is loaded again inside each worker.
 */
export interface Environment<Item = unknown> {
  name: string;
  version: string;
  description?: string;
  /** The items to run; `options.dataset` is the --dataset/--tasks value when the user gave one. */
  items(options: EnvironmentOptions): AsyncIterable<Item> | Iterable<Item>;
  /** A stable id for the item (its prompt key); default: derived from the prompt content. */
  id?(item: Item): string | undefined;
  prompt(item: Item): PromptInput;
  /** Per-item system prompt; falls back to `systemPrompt`. */
  system?(item: Item): string | undefined;
  systemPrompt?: string;
  toolsets?: string[];
  distribution?: string;
  maxTurns?: number;
  sandbox?: SandboxRequest | ((item: Item) => SandboxRequest);
  /** For per-category breakdowns. */
  category?(item: Item): string | undefined;
  /** Metadata carried into the record's source.fields. */
  fields?(item: Item): Record<string, unknown>;
  setup?(item: Item, sandbox: Sandbox): Promise<void>;
  reward?(item: Item, result: AgentResult, context: RewardContext): Promise<RewardOutput> | RewardOutput;
  /** Bound on the reward hook's time (default 10 minutes). */
  rewardTimeoutMs?: number | ((item: Item) => number);
}

export interface EnvironmentOptions {
  dataset?: string;
  limit?: number;
}

export function defineEnvironment<Item>(environment: Environment<Item>): Environment<Item> {
  return environment;
}
