import { z } from 'zod';
import { agentLoopOptions, AgentSettingsSchema } from '../agent/agent-settings.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { runConversation, type ConversationOptions } from '../agent/conversation.js';
import type { AgentResult } from '../agent/result.js';
// The schema only: the bridge itself (proxy, images, agent network) loads for `agent: cli` runs.
import { AgentDefinitionSchema, type AgentDefinition } from '../bridge/agent-definition.js';
import type { AgentNetwork } from '../bridge/index.js';
import { JudgeSettingsSchema } from '../eval/judge.js';
import { DEFAULT_STOP_TOKEN, DEFAULT_USER_TURNS, type Environment } from '../eval/environment.js';
import type { RewardResult } from '../eval/score.js';
import {
  ConfigError,
  errorMessage,
  RunError,
  SandboxError,
  serializeError,
  TrajError,
  type SerializedError,
} from '../errors.js';
import { addUsage, emptyUsage, type Message, type ToolSpec } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import { BwrapStatusSchema, type BwrapStatus } from '../sandbox/bwrap.js';
import { LazySandbox } from '../sandbox/lazy-sandbox.js';
import type { SidecarService } from '../sandbox/docker-services.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { toolSpec } from '../tools/tool-spec.js';
import type { Tool } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolServices } from '../tools/services.js';
import { disposeToolState } from '../tools/tool-state.js';
import { rolloutArtifacts } from './rollout-artifacts.js';
import { withEnvironmentTools, type McpToolsFunction } from './environment-tools.js';
import { withoutRunTimePrompt, withRunTimePrompt } from './run-time-prompt.js';
import { rolloutJudgeCache, type JudgeCacheEntry } from './judge-cache.js';
import { rolloutKnowledge, type RolloutKnowledge } from './rollout-knowledge.js';
import { rolloutWebCache, type WebCacheEntry } from './web-cache.js';
import { subscribeToAbort } from '../util/abort-subscribers.js';

/** Settings shared by every rollout of a run (plain JSON: they cross into worker threads). */
export const RolloutSettingsSchema = AgentSettingsSchema.extend({
  run: z.string(),
  /** Run-time only (never in records): appended to the system prompt the model is sent. */
  ephemeralSystemPrompt: z.string().optional(),
  /** Run-time only (never in records): messages sent between the system prompt and the prompt. */
  prefill: z.array(z.custom<Message>()).optional(),
  sandbox: z.object({
    kind: z.enum(['local', 'docker']),
    image: z.string().optional(),
    workdir: z.string().optional(),
    /** Local only: an existing folder to work in (`traj ask --workdir`). */
    hostFolder: z.string().optional(),
    docker: z.record(z.string(), z.unknown()).optional(),
    /** Docker: spare started containers per image in each thread (the run's concurrency over its threads). */
    warm: z.number().int().min(0).optional(),
    local: z.record(z.string(), z.unknown()).optional(),
    /** Local only: the main thread's bubblewrap probe, so rollouts in worker threads need none of their own. */
    bwrap: BwrapStatusSchema.optional(),
  }),
  agent: z.enum(['model', 'noop', 'oracle', 'cli']).default('model'),
  /** With agent 'cli': the third-party agent that is the policy (`--agent qwen-code`, docs/agents.md). */
  agentCli: AgentDefinitionSchema.optional(),
  rolloutTimeoutMs: z.number().int().positive().optional(),
  /** Absolute path of the environment module (eval/bench); absent for a plain prompt batch. */
  environmentModule: z.string().optional(),
  mcpServers: z.record(z.string(), z.unknown()).optional(),
  /** The LLM judge panel reward hooks may call (eval). */
  judges: JudgeSettingsSchema.optional(),
  /** Seed folder of the memory (each rollout works on a private copy); absent: memory off. */
  memory: z.string().optional(),
  /** Skill folders, read-only unless skillsWritable. */
  skills: z.array(z.string()).optional(),
  skillsWritable: z.boolean().optional(),
  /** Where tools keep files beyond the rollout (screenshots), one folder per rollout below it. */
  artifactsDir: z.string().optional(),
  /** The run store the web cache reads (workers read it; the main thread writes it). */
  webCache: z.object({ path: z.string().optional(), mode: z.enum(['readwrite', 'read', 'off']) }).optional(),
});
export type RolloutSettings = z.infer<typeof RolloutSettingsSchema>;

/** What one rollout needs besides the shared settings. */
export interface RolloutTask {
  key: string;
  sample: number;
  toolsets: string[];
  /** The conversation to start from (user turns or a prefix), without the system prompt. */
  messages: Message[];
  system?: string;
  image?: string;
  workdir?: string;
  /** This task's docker settings over the run's (a Harbor task.toml's cpus, memory, network). */
  docker?: Record<string, unknown>;
  /** Services started beside the task's container (a Harbor task's docker-compose.yaml). */
  services?: SidecarService[];
  /** The environment's item (eval), passed to setup and reward. */
  item?: unknown;
  settings: RolloutSettings;
}

export type { RewardResult } from '../eval/score.js';

export interface RolloutOutcome {
  key: string;
  sample: number;
  result: AgentResult;
  tools: ToolSpec[];
  /** Set by a pool worker: the names of `tools`, which it leaves empty once the main thread has them. */
  toolsKey?: string;
  reward?: RewardResult;
  /** Judge verdicts the reward produced, for the main thread to cache with the result. */
  judgeCache?: JudgeCacheEntry[];
  /** Pages and searches fetched by web tools, for the main thread to cache, and the fetch/hit counts. */
  webCache?: WebCacheEntry[];
  webCounts?: { fetches: number; hits: number };
  /** Files tools kept (absolute paths), for the record. */
  artifacts?: string[];
  /** An infrastructure fault (sandbox, setup, timeout): the rollout is failed and retried later. */
  error?: SerializedError;
  /** Stopped by the user (SIGINT/SIGTERM): the key goes back to pending. */
  interrupted: boolean;
}

/** Per-thread services a rollout uses; the worker caches them across rollouts. */
export interface RolloutServices {
  model(settings: RolloutSettings): ModelClient;
  /** The thread's services for tools (model clients per endpoint shared with `model`). */
  tools(settings: RolloutSettings): ToolServices;
  registry(settings: RolloutSettings, toolsets: readonly string[]): Promise<ToolRegistry>;
  createSandbox(options: {
    kind: 'local' | 'docker';
    image?: string;
    workdir?: string;
    hostFolder?: string;
    run: string;
    key: string;
    docker?: Record<string, unknown>;
    services?: SidecarService[];
    warm?: number;
    local?: Record<string, unknown>;
    bwrap?: BwrapStatus;
  }): Promise<Sandbox>;
  /**
   * Take over a finished rollout's teardown (its tool state and sandbox): the outcome returns
   * without waiting for it, so the slot starts its next rollout sooner. Whoever takes it waits
   * for every teardown before the thread stops. A promise back means too many are pending: the
   * rollout waits for its own. Unset: the rollout always waits for its own.
   */
  deferTeardown?(teardown: () => Promise<void>): Promise<void> | undefined;
  /** The tools of MCP servers an environment starts (an `mcp_servers` mapping), started once per thread. */
  mcpTools?: McpToolsFunction;
}

class RolloutTimeout extends TrajError {}

/** The rollout's sandbox: the run's settings, with the task's image, workdir, docker settings and services over them. */
function sandboxOptions(
  task: RolloutTask,
  settings: RolloutSettings,
  workdir: string | undefined,
): Parameters<RolloutServices['createSandbox']>[0] {
  return {
    kind: settings.sandbox.kind,
    image: task.image ?? settings.sandbox.image,
    workdir,
    ...(settings.sandbox.hostFolder ? { hostFolder: settings.sandbox.hostFolder } : {}),
    run: settings.run,
    key: task.key,
    docker: task.docker ? { ...settings.sandbox.docker, ...task.docker } : settings.sandbox.docker,
    ...(task.services ? { services: task.services } : {}),
    ...(settings.sandbox.warm ? { warm: settings.sandbox.warm } : {}),
    local: settings.sandbox.local,
    ...(settings.sandbox.bwrap ? { bwrap: settings.sandbox.bwrap } : {}),
  };
}

/**
 * One rollout: sandbox → environment setup → agent → reward over the same sandbox → dispose
 * (always). Never throws; every failure is classified in the outcome.
 */
export async function executeRollout(
  task: RolloutTask,
  services: RolloutServices,
  interrupt: AbortSignal,
): Promise<RolloutOutcome> {
  const abort = rolloutAbort(task.settings.rolloutTimeoutMs, interrupt);
  const rollout = new RolloutResources(task, services, interrupt);
  try {
    const environment = task.settings.environmentModule
      ? await (await import('../eval/load-environment.js')).loadEnvironment(task.settings.environmentModule)
      : undefined;
    const messages = await rollout.prepare(environment);
    try {
      rollout.sandbox = await openSandbox(await rollout.sandboxTask(), services, environment, abort.controller);
    } catch (error) {
      return rollout.outcome({ result: emptyResult(messages, 'api_error'), error: sandboxFault(error) });
    }
    const result = await rollout.runAgent(messages, environment, abort.controller.signal);
    const fault = rolloutFault(abort.controller.signal, rollout.sandbox);
    if (fault) return rollout.outcome({ result, error: fault });
    if (interrupt.aborted || !environment?.reward) return rollout.outcome({ result });
    return rollout.outcome({ result, ...(await scoreResult(task, environment, result, rollout.sandbox)) });
  } catch (error) {
    return rollout.outcome({ result: emptyResult(task.messages, 'api_error'), error: serializeError(error) });
  } finally {
    abort.dispose();
    await rollout.release();
  }
}

/** The rollout's own abort: the user's interrupt or --rollout-timeout, whichever comes first. */
function rolloutAbort(
  timeoutMs: number | undefined,
  interrupt: AbortSignal,
): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const unsubscribe = subscribeToAbort(interrupt, () => controller.abort(interrupt.reason));
  const timeout = () =>
    controller.abort(
      new RolloutTimeout(`rollout exceeded --rollout-timeout (${timeoutMs} ms)`, {
        code: 'rollout_timeout',
        retryable: true,
      }),
    );
  const timer = timeoutMs ? setTimeout(timeout, timeoutMs) : undefined;
  return {
    controller,
    dispose() {
      if (timer) clearTimeout(timer);
      unsubscribe();
    },
  };
}

/** An infrastructure fault that ended the agent: the timeout, or a sandbox that could not be made at first use. */
function rolloutFault(signal: AbortSignal, sandbox: Sandbox | undefined): SerializedError | undefined {
  if (signal.reason instanceof RolloutTimeout) return serializeError(signal.reason);
  if (sandbox instanceof LazySandbox && sandbox.createError !== undefined) return sandboxFault(sandbox.createError);
  return undefined;
}

/**
 * The sandbox: made now when the environment's setup needs it, else lazily at the first tool call
 * (a rollout that calls no tool never pays for one).
 */
async function openSandbox(
  task: RolloutTask,
  services: RolloutServices,
  environment: Environment | undefined,
  controller: AbortController,
): Promise<Sandbox> {
  const { settings } = task;
  const workdir = task.workdir ?? settings.sandbox.workdir;
  const create = () => services.createSandbox(sandboxOptions(task, settings, workdir));
  if (!environment?.setup)
    return new LazySandbox(create, settings.sandbox.kind, workdir ?? '.', (error) => controller.abort(error));
  const sandbox = await create();
  try {
    await environment.setup(task.item, sandbox);
  } catch (error) {
    await sandbox.dispose().catch(() => undefined);
    throw error;
  }
  return sandbox;
}

/** The environment's reward over the rollout's sandbox; a judge's calls are the rollout's spend too. */
async function scoreResult(
  task: RolloutTask,
  environment: Environment,
  result: AgentResult,
  sandbox: Sandbox | undefined,
): Promise<Pick<RolloutOutcome, 'reward' | 'judgeCache'>> {
  const { settings } = task;
  const cache = rolloutJudgeCache(settings.judges?.cachePath);
  // Loaded with the first environment's reward: scorers and their packages are no plain run's cost.
  const { scoreRollout } = await import('../eval/score.js');
  const reward = await scoreRollout({
    environment,
    item: task.item,
    result,
    sandbox: sandbox!,
    judges: settings.judges && { ...settings.judges, pricing: settings.pricing },
    cache,
    onUsage: (usage) => addUsage(result.usage, usage),
  });
  return { reward, judgeCache: cache.fresh };
}

/**
 * What one rollout holds from start to teardown: its tools, their state (a browser context), the
 * caches and artifacts it fills, its sandbox and knowledge stores. Released on every path.
 */
class RolloutResources {
  tools: Tool[] = [];
  sandbox: Sandbox | undefined;
  private knowledge: RolloutKnowledge | undefined;
  private readonly webCache: ReturnType<typeof rolloutWebCache>;
  private readonly artifacts: ReturnType<typeof rolloutArtifacts>;
  private readonly toolServices: ToolServices;
  private readonly toolState = new Map<string, unknown>();
  /** With an agent CLI: its rollout network, and the tools it offered its model. */
  private network: AgentNetwork | undefined;
  private agentTools: ToolSpec[] | undefined;

  constructor(
    private readonly task: RolloutTask,
    private readonly services: RolloutServices,
    private readonly interrupt: AbortSignal,
  ) {
    this.webCache = rolloutWebCache(task.settings.webCache);
    this.artifacts = rolloutArtifacts(task.settings.artifactsDir, task.key, task.sample);
    this.toolServices = { ...services.tools(task.settings), webCache: this.webCache, artifacts: this.artifacts.sink };
  }

  /** Select the tools, open the knowledge stores, and build the starting conversation. */
  async prepare(environment: Environment | undefined): Promise<Message[]> {
    const { task, services } = this;
    const registry = await services.registry(task.settings, task.toolsets);
    const drawn = registry.select(task.toolsets, { env: process.env, services: this.toolServices });
    this.tools = await withEnvironmentTools(drawn, environment, services.mcpTools);
    this.knowledge = rolloutKnowledge(task.settings, task.toolsets);
    // The memory and skills stores join the rollout's one tool state (disposed with it at the end).
    for (const [key, value] of this.knowledge.state) this.toolState.set(key, value);
    const system = buildSystemPrompt({
      base: task.system ?? task.settings.systemPrompt,
      tools: this.tools,
      sections: this.knowledge.sections,
    });
    return [{ role: 'system', content: system }, ...task.messages];
  }

  /**
   * The task as the sandbox is made for it: with an agent CLI, in the agent's image (built once)
   * and on a network of its own whose one reachable address is the host's proxy.
   */
  async sandboxTask(): Promise<RolloutTask> {
    const { task } = this;
    const { settings } = task;
    if (settings.agent !== 'cli') return task;
    const definition = cliDefinition(settings);
    const { agentImage, createAgentNetwork } = await import('../bridge/index.js');
    const image = await agentImage(definition, task.image ?? settings.sandbox.image);
    this.network = await createAgentNetwork(settings.run, task.key);
    const docker = { ...settings.sandbox.docker, network: this.network.name };
    return { ...task, image, settings: { ...settings, sandbox: { ...settings.sandbox, docker } } };
  }

  /** The agent over the sandbox, with the run-time prompt sent but never recorded. */
  async runAgent(messages: Message[], environment: Environment | undefined, signal: AbortSignal): Promise<AgentResult> {
    const { task } = this;
    if (task.settings.agent === 'cli') return this.runAgentCli(messages, environment, signal);
    const result = await runRolloutAgent(
      task,
      this.services,
      { services: this.toolServices, state: this.toolState },
      withRunTimePrompt(messages, task.settings),
      this.tools,
      this.sandbox!,
      signal,
      environment,
    );
    return withKnowledge(withoutRunTimePrompt(result, messages, task.settings), this.knowledge!);
  }

  /** A third-party agent in the sandbox; its model calls go through the rollout's recording proxy. */
  private async runAgentCli(
    messages: Message[],
    environment: Environment | undefined,
    signal: AbortSignal,
  ): Promise<AgentResult> {
    const { task } = this;
    const limitMs = environment?.agentTimeoutMs?.(task.item);
    const { runAgentCli } = await import('../bridge/index.js');
    const { result, tools } = await runAgentCli({
      definition: cliDefinition(task.settings),
      client: this.services.model(task.settings),
      sandbox: this.sandbox!,
      host: this.network!.gateway,
      messages,
      maxTurns: task.settings.maxTurns,
      signal: limitMs ? AbortSignal.any([signal, AbortSignal.timeout(limitMs)]) : signal,
      artifacts: this.artifacts.sink,
    });
    this.agentTools = tools;
    return result;
  }

  outcome(fields: Partial<RolloutOutcome> & { result: AgentResult }): RolloutOutcome {
    const { webCache, artifacts } = this;
    return {
      key: this.task.key,
      sample: this.task.sample,
      tools: this.agentTools ?? this.tools.map(toolSpec),
      interrupted: this.interrupt.aborted,
      ...(webCache.fresh.length > 0 ? { webCache: webCache.fresh } : {}),
      ...(webCache.counts.fetches + webCache.counts.hits > 0 ? { webCounts: { ...webCache.counts } } : {}),
      ...(artifacts.paths.length > 0 ? { artifacts: [...artifacts.paths] } : {}),
      ...fields,
    };
  }

  /** Tear down, or hand the teardown to the thread's services so the slot starts its next rollout sooner. */
  async release(): Promise<void> {
    const { toolState, sandbox, knowledge, network } = this;
    // The network goes after its container: the engine refuses to remove one still in use.
    const teardown = () => tearDown(toolState, sandbox, knowledge).then(() => network?.remove());
    const own = this.services.deferTeardown ? this.services.deferTeardown(teardown) : teardown();
    if (own) await own;
  }
}

async function tearDown(
  toolState: Map<string, unknown>,
  sandbox: Sandbox | undefined,
  knowledge: RolloutKnowledge | undefined,
): Promise<void> {
  await disposeToolState(toolState);
  await sandbox?.dispose().catch(() => undefined);
  knowledge?.dispose();
}

function cliDefinition(settings: RolloutSettings): AgentDefinition {
  if (!settings.agentCli)
    throw new ConfigError('agent cli needs an agent definition (settings.agentCli)', { code: 'config_invalid' });
  if (settings.sandbox.kind !== 'docker')
    throw new ConfigError(`--agent ${settings.agentCli.name} runs the agent in Docker: use --sandbox docker`, {
      code: 'cli_usage',
    });
  return settings.agentCli;
}

/** The memory as the rollout left it and the skills it viewed go into the result, so the record keeps them. */
function withKnowledge(result: AgentResult, knowledge: RolloutKnowledge): AgentResult {
  const memory = knowledge.finalMemory();
  const viewed = knowledge.skillsViewed();
  return { ...result, ...(memory ? { memory } : {}), ...(viewed.length > 0 ? { skillsViewed: viewed } : {}) };
}

async function runRolloutAgent(
  task: RolloutTask,
  services: RolloutServices,
  toolContext: { services: ToolServices; state: Map<string, unknown> },
  messages: Message[],
  tools: Tool[],
  sandbox: Sandbox,
  signal: AbortSignal,
  environment: Environment | undefined,
): Promise<AgentResult> {
  const { settings } = task;
  if (settings.agent === 'noop') return emptyResult([...messages, { role: 'assistant', content: '' }], 'stop');
  // The item's own time limit stops the agent, not the rollout: what it did is still scored.
  const limitMs = environment?.agentTimeoutMs?.(task.item);
  const timeLimit = limitMs ? AbortSignal.timeout(limitMs) : undefined;
  const agentSignal = timeLimit ? AbortSignal.any([signal, timeLimit]) : signal;
  let result: AgentResult;
  if (settings.agent === 'oracle') {
    if (!environment)
      throw new ConfigError(
        '--agent oracle needs an environment with an oracle hook (traj eval/bench), not a plain prompt dataset',
        { code: 'oracle_missing' },
      );
    const { runOracleAgent } = await import('../eval/oracle-agent.js');
    result = await runOracleAgent({
      environment,
      item: task.item,
      tools,
      messages,
      sandbox,
      signal: agentSignal,
      budget: settings.budget,
    });
  } else {
    const model = services.model(settings);
    result = await runConversation({
      ...environmentConversation(environment, task.item, settings, toolContext.services),
      ...(await agentLoopOptions(settings, model, toolContext.services)),
      tools,
      messages,
      sandbox,
      signal: agentSignal,
      state: toolContext.state,
    });
  }
  if (!timeLimit?.aborted || signal.aborted) return result;
  const error = new RunError(
    `the agent ran out of this item's time limit (${limitMs! / 1000} s) and was stopped; its work was scored as it stood`,
    { code: 'agent_timeout' },
  );
  return { ...result, finishReason: 'aborted', error: serializeError(error) };
}

/** What an environment adds to the agent's run: a simulated user and terminal tools (none for a batch). */
function environmentConversation(
  environment: Environment | undefined,
  item: unknown,
  settings: RolloutSettings,
  services: ToolServices,
): Pick<ConversationOptions, 'user' | 'terminalTools'> {
  const spec = environment?.user;
  const terminalTools = environment?.terminalTools ?? [];
  if (!spec) return { terminalTools };
  const endpoint = { ...settings.endpoint, ...spec.endpoint };
  return {
    terminalTools,
    user: {
      model: services.model(endpoint),
      name: endpoint.model,
      system: spec.system(item),
      stopToken: spec.stopToken ?? DEFAULT_STOP_TOKEN,
      maxTurns: spec.maxTurns ?? DEFAULT_USER_TURNS,
    },
  };
}

function sandboxFault(error: unknown): SerializedError {
  const fault =
    error instanceof TrajError
      ? error
      : new SandboxError(`sandbox setup failed: ${errorMessage(error)}`, {
          code: 'setup_failed',
          retryable: true,
          cause: error,
        });
  return serializeError(fault);
}

function emptyResult(messages: Message[], finishReason: AgentResult['finishReason']): AgentResult {
  return {
    messages,
    finishReason,
    turns: 0,
    apiCalls: 0,
    toolCalls: [],
    usage: emptyUsage(),
    timings: { started_at: new Date().toISOString(), duration_ms: 0, model_ms: 0, tool_ms: 0 },
  };
}
