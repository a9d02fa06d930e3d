import { z } from 'zod';
import { agentLoopOptions, AgentSettingsSchema } from '../agent/agent-settings.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { runAgent } from '../agent/loop.js';
import type { AgentResult } from '../agent/result.js';
import { JudgeSettingsSchema } from '../eval/judge.js';
import type { Environment } from '../eval/environment.js';
import { loadEnvironment } from '../eval/load-environment.js';
import { runOracleAgent } from '../eval/oracle-agent.js';
import { scoreRollout, type RewardResult } from '../eval/score.js';
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
import { withoutRunTimePrompt, withRunTimePrompt } from './run-time-prompt.js';
import { rolloutJudgeCache, type JudgeCacheEntry } from './judge-cache.js';
import { rolloutKnowledge, type RolloutKnowledge } from './rollout-knowledge.js';
import { rolloutWebCache, type WebCacheEntry } from './web-cache.js';

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
  agent: z.enum(['model', 'noop', 'oracle']).default('model'),
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
export { normalizeReward } from '../eval/score.js';

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
  const { settings } = task;
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(interrupt.reason);
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  const timer = settings.rolloutTimeoutMs
    ? setTimeout(
        () =>
          controller.abort(
            new RolloutTimeout(`rollout exceeded --rollout-timeout (${settings.rolloutTimeoutMs} ms)`, {
              code: 'rollout_timeout',
              retryable: true,
            }),
          ),
        settings.rolloutTimeoutMs,
      )
    : undefined;
  let sandbox: Sandbox | undefined;
  let tools: Tool[] = [];
  let knowledge: RolloutKnowledge | undefined;
  const webCache = rolloutWebCache(settings.webCache);
  const artifacts = rolloutArtifacts(settings.artifactsDir, task.key, task.sample);
  const toolServices: ToolServices = { ...services.tools(settings), webCache, artifacts: artifacts.sink };
  // Tool state holds resources (a browser context) closed when the rollout ends, on every path.
  const toolState = new Map<string, unknown>();
  const outcome = (fields: Partial<RolloutOutcome> & { result: AgentResult }): RolloutOutcome => ({
    key: task.key,
    sample: task.sample,
    tools: tools.map(toolSpec),
    interrupted: interrupt.aborted,
    ...(webCache.fresh.length > 0 ? { webCache: webCache.fresh } : {}),
    ...(webCache.counts.fetches + webCache.counts.hits > 0 ? { webCounts: { ...webCache.counts } } : {}),
    ...(artifacts.paths.length > 0 ? { artifacts: [...artifacts.paths] } : {}),
    ...fields,
  });
  try {
    const environment = settings.environmentModule ? await loadEnvironment(settings.environmentModule) : undefined;
    tools = (await services.registry(settings, task.toolsets)).select(task.toolsets, {
      env: process.env,
      services: toolServices,
    });
    knowledge = rolloutKnowledge(settings, task.toolsets);
    // The memory and skills stores join the rollout's one tool state (disposed with it at the end).
    for (const [key, value] of knowledge.state) toolState.set(key, value);
    const system = buildSystemPrompt({
      base: task.system ?? settings.systemPrompt,
      tools,
      sections: knowledge.sections,
    });
    const messages: Message[] = [{ role: 'system', content: system }, ...task.messages];
    try {
      const workdir = task.workdir ?? settings.sandbox.workdir;
      const create = () => services.createSandbox(sandboxOptions(task, settings, workdir));
      if (environment?.setup) {
        sandbox = await create();
        await environment.setup(task.item, sandbox);
      } else {
        // Without a setup step nothing needs the sandbox before the first tool call: create it then.
        sandbox = new LazySandbox(create, settings.sandbox.kind, workdir ?? '.', (error) => controller.abort(error));
      }
    } catch (error) {
      return outcome({ result: emptyResult(messages, 'api_error'), error: sandboxFault(error) });
    }
    const sent = withRunTimePrompt(messages, settings);
    const result = withKnowledge(
      withoutRunTimePrompt(
        await runRolloutAgent(
          task,
          services,
          { services: toolServices, state: toolState },
          sent,
          tools,
          sandbox,
          controller.signal,
          environment,
        ),
        messages,
        settings,
      ),
      knowledge,
    );
    if (controller.signal.reason instanceof RolloutTimeout)
      return outcome({ result, error: serializeError(controller.signal.reason) });
    if (sandbox instanceof LazySandbox && sandbox.createError !== undefined)
      return outcome({ result, error: sandboxFault(sandbox.createError) });
    if (interrupt.aborted) return outcome({ result });
    if (!environment?.reward) return outcome({ result });
    const cache = rolloutJudgeCache(settings.judges?.cachePath);
    const reward = await scoreRollout({
      environment,
      item: task.item,
      result,
      sandbox,
      judges: settings.judges && { ...settings.judges, pricing: settings.pricing },
      cache,
      // A judge's calls are the rollout's spend too: tokens and cost go into the record's usage.
      onUsage: (usage) => addUsage(result.usage, usage),
    });
    return outcome({ result, reward, judgeCache: cache.fresh });
  } catch (error) {
    return outcome({ result: emptyResult(task.messages, 'api_error'), error: serializeError(error) });
  } finally {
    if (timer) clearTimeout(timer);
    interrupt.removeEventListener('abort', onInterrupt);
    const teardown = () => tearDown(toolState, sandbox, knowledge);
    const own = services.deferTeardown ? services.deferTeardown(teardown) : teardown();
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
    result = await runAgent({
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
