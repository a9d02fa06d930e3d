import pLimit from 'p-limit';
import type { AgentResult } from '../agent/result.js';
import { SandboxError } from '../errors.js';
import { createSandbox } from '../sandbox/index.js';
import { LazySandbox } from '../sandbox/lazy-sandbox.js';
import type { RunStore } from '../run/store.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { builtinRegistry } from '../tools/builtin.js';
import { executeToolCall } from '../tools/execute-tool-call.js';
import type { Tool } from '../tools/tool.js';
import type { Environment } from '../eval/environment.js';
import { JudgeVerdictSchema, type JudgeCache, type JudgeSettings } from '../eval/judge.js';
import { scoreRollout, type RewardResult } from '../eval/score.js';
import { addUsage, emptyUsage, type Usage } from '../model/messages.js';
import type { TrajectoryRecord } from '../trajectory/record.js';

export interface RescoreInput<Item = unknown> {
  store: RunStore;
  environment: Environment<Item>;
  /** The environment's items with their keys (the same keys the run stored), read as rescoring goes. */
  items: AsyncIterable<readonly [string, Item]> | Iterable<readonly [string, Item]>;
  judges?: JudgeSettings;
  /** Where a replaying environment's fresh sandbox is created. */
  sandbox: {
    kind: 'local' | 'docker';
    image?: string;
    workdir?: string;
    docker?: Record<string, unknown>;
    local?: Record<string, unknown>;
  };
  run: string;
  concurrency: number;
  onScored?: (key: string, sample: number, reward: RewardResult) => void;
}

export interface RescoreSummary {
  rescored: number;
  /** Stored records whose item the environment no longer yields (kept as they were). */
  missingItems: number;
  rewardErrors: number;
  /** Verdicts the store already held, so no judge call was made. */
  judgeCacheHits: number;
  judgeCalls: number;
}

/**
 * Re-run only the reward (and its judge calls) over stored trajectories: no policy calls, no
 * rollouts. Judge verdicts come from the store's cache when the same grade was asked before.
 * The sandbox the agent used is gone: environments with `rescore: 'replay'` get a fresh one,
 * set up and with the recorded tool calls re-executed; the others get none (a reward that
 * touches it fails with a message saying so, recorded as its reward_error).
 */
export async function rescoreRun<Item>(input: RescoreInput<Item>): Promise<RescoreSummary> {
  const summary: RescoreSummary = { rescored: 0, missingItems: 0, rewardErrors: 0, judgeCacheHits: 0, judgeCalls: 0 };
  const cache = storeJudgeCache(input.store, summary);
  const recorded = input.store.countRecords({ status: 'done' });
  const limit = pLimit(input.concurrency);
  input.store.startSpendCounter();
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  // Items stream in; each item's stored rollouts are read from the store by key, so neither the
  // items nor the records are ever held whole. A full pool pauses the reading; a failure stops it.
  for await (const [key, item] of input.items) {
    for (const row of input.store.samplesOf(key, 'done')) {
      if (row.record === null || failure) continue;
      const rescoring: Promise<void> = limit(() => rescoreRow(input, item, row, cache, summary))
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(rescoring));
      inFlight.add(rescoring);
      if (inFlight.size >= input.concurrency) await Promise.race(inFlight);
    }
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  summary.missingItems = recorded - summary.rescored;
  return summary;
}

async function rescoreRow<Item>(
  input: RescoreInput<Item>,
  item: Item,
  row: { key: string; sample: number; record: string | null },
  cache: JudgeCache,
  summary: RescoreSummary,
): Promise<void> {
  const record = JSON.parse(row.record!) as TrajectoryRecord;
  const judged = emptyUsage();
  const reward = await rescoreOne(input, item, record, cache, judged);
  // The new judge calls are spent on this rollout too: its usage and the run's spend include them.
  const usage = addUsage({ ...record.usage, unpriced_models: [...(record.usage.unpriced_models ?? [])] }, judged);
  input.store.updateRecord(row.key, row.sample, { ...record, ...reward, usage }, reward.reward);
  if (judged.cost) input.store.addSpend(judged.cost);
  summary.rescored++;
  if (reward.reward_error !== null) summary.rewardErrors++;
  input.onScored?.(row.key, row.sample, reward);
}

async function rescoreOne<Item>(
  input: RescoreInput<Item>,
  item: Item,
  record: TrajectoryRecord,
  cache: JudgeCache,
  judged: Usage,
): Promise<RewardResult> {
  const result = resultFromRecord(record);
  const replay = input.environment.rescore === 'replay';
  const sandbox = replay ? await replaySandbox(input, item, record) : new NoSandbox(input.environment.name);
  try {
    const onUsage = (usage: Usage) => addUsage(judged, usage);
    return await scoreRollout({
      environment: input.environment,
      item,
      result,
      sandbox,
      judges: input.judges,
      cache,
      onUsage,
    });
  } finally {
    await sandbox.dispose();
  }
}

/** The stored record as the AgentResult a reward hook reads (tool call timings are not kept). */
export function resultFromRecord(record: TrajectoryRecord): AgentResult {
  return {
    messages: record.messages,
    finishReason: record.finish_reason,
    turns: record.turns,
    apiCalls: record.api_calls,
    toolCalls: record.tool_stats.flatMap((stat) => [
      ...Array.from({ length: stat.ok }, () => ({ name: stat.name, ok: true, ms: 0 })),
      ...Array.from({ length: stat.errors }, () => ({ name: stat.name, ok: false, ms: 0 })),
    ]),
    usage: record.usage,
    timings: record.timing,
  };
}

/** A fresh sandbox in the state the agent left: setup, then every recorded tool call in order. */
async function replaySandbox<Item>(input: RescoreInput<Item>, item: Item, record: TrajectoryRecord): Promise<Sandbox> {
  const create = () => createSandbox({ ...input.sandbox, run: input.run, key: record.id });
  const sandbox: Sandbox = input.environment.setup
    ? await create()
    : new LazySandbox(create, input.sandbox.kind, input.sandbox.workdir ?? '.');
  try {
    if (input.environment.setup) await input.environment.setup(item, sandbox);
    await replayToolCalls(record, sandbox);
    return sandbox;
  } catch (error) {
    await sandbox.dispose();
    throw error;
  }
}

async function replayToolCalls(record: TrajectoryRecord, sandbox: Sandbox): Promise<void> {
  const registry = builtinRegistry();
  const toolsets = record.toolsets.filter((toolset) => registry.hasToolset(toolset));
  const tools: Tool[] = (await registry.load(toolsets)).select(toolsets, { env: process.env });
  const state = new Map<string, unknown>();
  const signal = new AbortController().signal;
  for (const message of record.messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) {
      await executeToolCall(
        tools,
        { id: call.id, name: call.function.name, arguments: call.function.arguments },
        { sandbox, signal, state, callId: call.id, env: process.env },
      );
    }
  }
}

/** Judge verdicts read from and written to the run store directly (rescoring runs on the main thread). */
function storeJudgeCache(store: RunStore, summary: RescoreSummary): JudgeCache {
  return {
    get(key) {
      const parsed = JudgeVerdictSchema.safeParse(store.judgeCacheGet(key));
      if (parsed.success) summary.judgeCacheHits++;
      return parsed.success ? parsed.data : undefined;
    },
    put(key, verdict) {
      summary.judgeCalls++;
      store.judgeCachePut(key, verdict);
    },
  };
}

/** The sandbox of a transcript-only rescore: there is none, and using it says why. */
class NoSandbox implements Sandbox {
  readonly id = 'rescore:no-sandbox';
  readonly kind = 'none';
  readonly workdir = '.';

  constructor(private readonly environment: string) {}

  private fail(): never {
    throw new SandboxError(
      `rescoring has no sandbox: the rollout's sandbox was disposed when it finished; environment '${this.environment}' reads sandbox state, so declare rescore: 'replay' in it to rebuild the state from the recorded tool calls`,
      { code: 'rescore_no_sandbox' },
    );
  }

  exec(): never {
    return this.fail();
  }
  execInShell(): never {
    return this.fail();
  }
  resolvePath(): never {
    return this.fail();
  }
  readFile(): never {
    return this.fail();
  }
  writeFile(): never {
    return this.fail();
  }
  upload(): never {
    return this.fail();
  }
  download(): never {
    return this.fail();
  }
  async dispose(): Promise<void> {}
}
