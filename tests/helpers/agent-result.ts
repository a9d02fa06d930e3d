import type { AgentResult } from '../../src/agent/result.js';
import type { Usage } from '../../src/model/messages.js';

/**
 * A one-turn answered rollout (system, question, answer; no tools) for tests that store or report
 * records: the usage and timings are the test's to set.
 */
export function answeredResult(
  options: { question?: string; answer?: string; usage?: Partial<Usage>; durationMs?: number; modelMs?: number } = {},
): AgentResult {
  const { question = 'q', answer = 'a', usage = {}, durationMs = 12, modelMs = 10 } = options;
  return {
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: question },
      { role: 'assistant', content: answer },
    ],
    finishReason: 'stop',
    turns: 1,
    apiCalls: 1,
    toolCalls: [],
    usage: { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0, cached_tokens: 0, cost: null, ...usage },
    timings: { started_at: new Date().toISOString(), duration_ms: durationMs, model_ms: modelMs, tool_ms: 0 },
  };
}
