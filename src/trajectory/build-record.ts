import type { AgentResult } from '../agent/result.js';
import { contentImages, type ToolSpec } from '../model/messages.js';
import type { TrajectoryRecord } from './record.js';
import { toShareGpt } from './sharegpt.js';
import { codeCalls, flatSubagents, hasReasoning, toolStats } from './statistics.js';

export interface RecordInput {
  key: string;
  sample: number;
  result: AgentResult;
  tools: ToolSpec[];
  toolsets: string[];
  model: string;
  source: TrajectoryRecord['source'];
  reward?: Pick<TrajectoryRecord, 'reward' | 'scores' | 'reward_details' | 'reward_error'>;
  group?: string | null;
  artifacts?: string[];
}

/** A pure function from one rollout to its record. `completed` means the agent gave a final answer on its own. */
export function buildRecord(input: RecordInput): TrajectoryRecord {
  const { result } = input;
  const completed = result.finishReason === 'stop';
  return {
    id: input.key,
    sample: input.sample,
    conversations: toShareGpt(result.messages, input.tools),
    messages: result.messages,
    tools: input.tools,
    toolsets: input.toolsets,
    model: input.model,
    completed,
    partial: !completed && result.messages.some((message) => message.role === 'assistant'),
    finish_reason: result.finishReason,
    turns: result.turns,
    api_calls: result.apiCalls,
    tool_stats: toolStats(result.toolCalls),
    usage: result.usage,
    compressions: result.compressions ?? [],
    memory: result.memory ?? null,
    skills_viewed: result.skillsViewed ?? [],
    has_reasoning: hasReasoning(result.messages),
    reward: input.reward?.reward ?? null,
    scores: input.reward?.scores ?? {},
    reward_details: input.reward?.reward_details ?? null,
    reward_error: input.reward?.reward_error ?? null,
    group: input.group ?? null,
    advantage: null,
    source: input.source,
    timing: {
      started_at: result.timings.started_at,
      duration_ms: result.timings.duration_ms,
      model_ms: result.timings.model_ms,
      tool_ms: result.timings.tool_ms,
    },
    error: result.error ?? null,
    images: result.messages.flatMap((message) => (message.role === 'user' ? contentImages(message.content) : [])),
    artifacts: input.artifacts ?? [],
    subagents: flatSubagents(result.toolCalls),
    code_calls: codeCalls(result.toolCalls),
    ...(result.completions?.length ? { completions: result.completions } : {}),
    simulated_user: result.simulatedUser ?? null,
  };
}
