import type { AgentResult } from '../agent/result.js';
import type { Message } from '../model/messages.js';
import type { ImageBuild } from '../sandbox/docker-build.js';
import type { SidecarService } from '../sandbox/docker-services.js';
import type { ExecOptions, ExecResult, Sandbox } from '../sandbox/sandbox.js';
import type { Tool } from '../tools/tool.js';
import type { PanelVerdict } from './judge.js';
import type { OracleContext } from './oracle-context.js';

/** What `RewardContext.judge` grades; every field defaults from the rollout and the run's judge settings. */
export interface JudgeInput {
  /** Default: the rollout's final answer (last assistant text). */
  response?: string;
  /** Default: the task (the first user message). */
  prompt?: string;
  /** Default: the run's rubric (config.yaml judge.rubric_file / --judge-rubric), else the environment's. */
  rubric?: string;
  /** Default: the environment's `judge.reference(item)`. */
  reference?: string;
  /** Default {min: 0, max: 10}; verdicts are normalised to 0..1 either way. */
  scale?: { min: number; max: number };
  /** Which of N independent gradings this is (each is cached on its own); default 0. */
  sample?: number;
}

/** What a reward hook can do to the rollout's own sandbox, after the agent finished and before disposal. */
export interface RewardContext {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string): Promise<void>;
  upload(localPath: string, remotePath: string): Promise<void>;
  download(remotePath: string, localPath: string): Promise<void>;
  /** Files under a directory (default the workdir), relative paths, recursively. */
  listFiles(path?: string): Promise<string[]>;
  /** Grade with the run's LLM judge panel (--judge-model ...); verdicts are cached in the run store. */
  judge(input?: JudgeInput): Promise<PanelVerdict>;
  /** Whether the run configured a judge (so an optional judge step can be skipped without one). */
  readonly judgeAvailable: boolean;
  readonly sandbox: Sandbox;
  readonly signal: AbortSignal;
}

/** An environment's defaults for the LLM judge (the endpoints come from the run's settings). */
export interface EnvironmentJudge<Item = unknown> {
  rubric?: string;
  scale?: { min: number; max: number };
  reference?(item: Item): string | undefined;
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
  /** Docker settings of this item over the run's (`sandbox.docker` fields: cpus, memory, network, ...). */
  docker?: Record<string, unknown>;
  /** Docker: services started beside the item's container (a Harbor task's docker-compose.yaml). */
  services?: SidecarService[];
  /** Docker: images built before the run's first rollout (a task's own Dockerfile), reused when already built. */
  builds?: ImageBuild[];
}

/**
 * A second model that plays the user: it answers each final reply of the agent until it says the
 * stop token, its turn limit is reached, or the agent calls one of the environment's terminal tools.
 */
export interface SimulatedUserSpec<Item = unknown> {
  /** Over the policy endpoint's fields (default: the policy endpoint and model). */
  endpoint?: { model?: string; base_url?: string; api_key_env?: string; temperature?: number };
  /** The user model's own system prompt for this item (its persona and goal). */
  system(item: Item): string;
  /** Said by the user when its goal is met or abandoned (default ###STOP###). */
  stopToken?: string;
  /** User replies at most (default 10). */
  maxTurns?: number;
}

export const DEFAULT_STOP_TOKEN = '###STOP###';
export const DEFAULT_USER_TURNS = 10;

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
  judge?: EnvironmentJudge<Item>;
  /** A rollout passes when its reward is at least this (default 1); the report's pass rate and pass@k use it. */
  passThreshold?: number;
  /**
   * What `traj eval --rescore` gives the reward, the rollout's sandbox being gone: 'transcript'
   * (default) — no sandbox (judge-only and answer-checking rewards); 'replay' — a fresh sandbox,
   * `setup`, then the recorded tool calls re-executed in order, so sandbox-state rewards see
   * the files the agent left.
   */
  rescore?: 'transcript' | 'replay';
  /**
   * The reference agent (`--agent oracle`): acts through `context.callTool` (the real tools, recorded
   * as a trajectory) and returns the final answer. Validates the environment: the oracle should
   * earn full reward on every item.
   */
  oracle?(item: Item, context: OracleContext): Promise<string> | string;
  /** The agent's time limit on this item: when it runs out the agent is stopped and the rollout is still scored. */
  agentTimeoutMs?(item: Item): number | undefined;
  /**
   * The environment's own tools, offered to every rollout beside the drawn toolsets: run, checked
   * and counted like any tool (errors become results the model reads; tool_stats count them).
   */
  tools?: Tool[];
  /** MCP servers the environment starts (an `mcp_servers` mapping); their tools join `tools`. */
  mcpServers?: Record<string, unknown>;
  /** Tools whose call ends the conversation once they have run (e.g. transfer_to_human). */
  terminalTools?: string[];
  /** A simulated user answering the agent (multi-turn evals). */
  user?: SimulatedUserSpec<Item>;
  /** A digest of the environment's definition (a YAML file and its tools module), part of the run fingerprint. */
  definitionHash?: string;
}

export interface EnvironmentOptions {
  dataset?: string;
  limit?: number;
  /** The run's --image, for environments whose items name their own image (it wins over theirs). */
  image?: string;
  /** The run's sandbox kind, so items() can refuse what cannot run there. */
  sandbox?: 'local' | 'docker';
  /** Environment-specific settings (a bench suite's `environment_settings`), validated by the environment. */
  settings?: Record<string, unknown>;
  /** The file `settings` came from (a suite file), so an environment's errors can name it. */
  settingsFile?: string;
}

export function defineEnvironment<Item>(environment: Environment<Item>): Environment<Item> {
  return environment;
}
