import { join } from 'node:path';
import type { AgentResult } from '../../src/agent/result.js';
import type { Message, ToolSpec } from '../../src/model/messages.js';
import { RunStore, type ItemStatus } from '../../src/run/store.js';
import { buildRecord } from '../../src/trajectory/build-record.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';

export const TERMINAL_TOOL: ToolSpec = {
  type: 'function',
  function: {
    name: 'terminal',
    description: 'run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

/** What one synthetic rollout holds; the variety is what the export schema must absorb. */
export interface RolloutShape {
  key: string;
  sample?: number;
  status?: Exclude<ItemStatus, 'pending'>;
  toolCall?: boolean;
  reasoning?: boolean;
  reward?: number | null;
  rewardDetails?: unknown;
  rewardError?: string;
  group?: string | null;
  advantage?: number | null;
  category?: string;
  toolsets?: string[];
  finishReason?: AgentResult['finishReason'];
  /** Pads the final answer, to make records large (sharding tests). */
  padding?: number;
}

/** A rollout's agent result, as the agent loop would return it. */
function agentResult(shape: RolloutShape): AgentResult {
  const messages: Message[] = [
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: `task ${shape.key}: list the files` },
  ];
  if (shape.toolCall) {
    messages.push({
      role: 'assistant',
      content: null,
      ...(shape.reasoning ? { reasoning: 'I should look at the directory first.' } : {}),
      ...(shape.reasoning
        ? {
            reasoning_details: [
              { type: 'reasoning.text', text: 'I should look at the directory first.', signature: 'sig-1', index: 0 },
            ],
          }
        : {}),
      tool_calls: [
        { id: `call_${shape.key}`, type: 'function', function: { name: 'terminal', arguments: '{"command": "ls"}' } },
      ],
      ...(shape.reasoning
        ? {
            echo: {
              reasoning_details: [
                { type: 'reasoning.text', text: 'I should look at the directory first.', signature: 'sig-1', index: 0 },
              ],
            },
          }
        : {}),
    });
    messages.push({
      role: 'tool',
      tool_call_id: `call_${shape.key}`,
      name: 'terminal',
      content: '{"exit_code": 0, "output": "a.txt\\nb.txt"}',
    });
  }
  messages.push({
    role: 'assistant',
    content: `There are two files: a.txt and b.txt. ${'x'.repeat(shape.padding ?? 0)}`,
    ...(shape.reasoning && !shape.toolCall ? { reasoning: 'The answer is known.' } : {}),
  });
  return {
    messages,
    finishReason: shape.finishReason ?? 'stop',
    turns: shape.toolCall ? 2 : 1,
    apiCalls: shape.toolCall ? 2 : 1,
    toolCalls: shape.toolCall ? [{ name: 'terminal', ok: true, ms: 12 }] : [],
    usage: {
      prompt_tokens: 120,
      completion_tokens: 30,
      reasoning_tokens: shape.reasoning ? 9 : 0,
      cached_tokens: shape.reasoning ? 96 : 0,
      cost: shape.reasoning ? 0.00042 : null,
      cost_source: shape.reasoning ? 'provider' : 'unknown',
      unpriced_models: shape.reasoning ? [] : ['fixture-model'],
    },
    timings: {
      started_at: '2026-01-02T03:04:05.000Z',
      duration_ms: 250.5,
      model_ms: 200,
      tool_ms: shape.toolCall ? 12 : 0,
    },
    ...(shape.finishReason === 'api_error'
      ? { error: { name: 'ModelError', code: 'http_503', retryable: true, message: 'endpoint down' } }
      : {}),
  };
}

export function recordFor(shape: RolloutShape, row: number): TrajectoryRecord {
  const scored = shape.reward !== undefined || shape.rewardError !== undefined;
  const record = buildRecord({
    key: shape.key,
    sample: shape.sample ?? 0,
    result: agentResult(shape),
    tools: shape.toolCall ? [TERMINAL_TOOL] : [],
    toolsets: shape.toolsets ?? (shape.toolCall ? ['terminal'] : []),
    model: 'fixture-model',
    source: {
      dataset: 'fixture.jsonl',
      row,
      fields: shape.category ? { category: shape.category, difficulty: row % 3 } : {},
    },
    reward: scored
      ? {
          reward: shape.reward ?? null,
          scores: shape.reward !== undefined && shape.reward !== null ? { exact: shape.reward } : {},
          reward_details: shape.rewardDetails ?? null,
          reward_error: shape.rewardError ?? null,
        }
      : undefined,
    group: shape.group ?? null,
  });
  record.advantage = shape.advantage ?? null;
  return record;
}

/** A real run store holding the given rollouts, written the way the pipeline writes them. */
export function buildStore(directory: string, name: string, shapes: RolloutShape[], kind = 'eval'): string {
  const path = join(directory, `${name}.sqlite`);
  const store = RunStore.open(path);
  try {
    store.initRun({
      name,
      kind,
      config: { dataset: 'fixture.jsonl' },
      fingerprintParts: {
        model: 'fixture-model',
        toolsets: { fixed: ['terminal'] },
        environment: { name: 'fixture', version: '1' },
        max_turns: 5,
        seed: 0,
        system_prompt: null,
      },
    });
    shapes.forEach((shape, row) => {
      const record = recordFor(shape, row);
      const status = shape.status ?? 'done';
      store.markDispatched(shape.key, shape.sample ?? 0, row, record.toolsets);
      if (status === 'failed')
        record.error = { name: 'SandboxError', code: 'setup_failed', retryable: true, message: 'sandbox setup failed' };
      store.saveResult({
        key: shape.key,
        sample: shape.sample ?? 0,
        status,
        record,
        reward: record.reward,
        finishReason: record.finish_reason,
        errorClass: status === 'failed' ? 'infra' : status === 'discarded' ? 'filtered' : null,
      });
    });
  } finally {
    store.close();
  }
  return path;
}

/** The mix every format test exports: tool calls or not, reasoning or not, rewards or not, one failed, one discarded. */
export const MIXED_ROLLOUTS: RolloutShape[] = [
  {
    key: 'alpha',
    toolCall: true,
    reasoning: true,
    reward: 1,
    rewardDetails: { checked: ['a.txt'] },
    group: 'alpha',
    category: 'files',
  },
  { key: 'beta', toolCall: false, reasoning: false, group: 'beta', category: 'chat' },
  { key: 'gamma', toolCall: true, reasoning: false, reward: 0, group: 'gamma', category: 'files' },
  {
    key: 'delta',
    toolCall: false,
    reasoning: true,
    rewardError: 'reward hook threw: no such file',
    group: 'delta',
    category: 'math & logic',
  },
  { key: 'epsilon', toolCall: false, reasoning: false, status: 'discarded', category: 'chat' },
  { key: 'zeta', toolCall: true, reasoning: true, status: 'failed', finishReason: 'api_error' },
  { key: 'eta', toolCall: true, reasoning: true, reward: 0.5, finishReason: 'max_turns', group: 'eta' },
];

/** The done records of a store exactly as stored, in export order (what a JSONL line must keep). */
export function storedRecords(path: string): Record<string, unknown>[] {
  const store = RunStore.open(path);
  try {
    return [...store.records({ status: 'done' })].map((row) => JSON.parse(row.text) as Record<string, unknown>);
  } finally {
    store.close();
  }
}
