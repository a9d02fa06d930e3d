import type { ScriptFunction } from '../../src/testing/index.js';

/**
 * The mock endpoint's script for the scale-out scenario: one `terminal` call doing a fixed amount
 * of CPU work (4 million multiply-adds in awk, ~0.1 s of one core), then a short answer. Each
 * rollout so makes two model calls and spends most of its CPU in the tool.
 */
const script: ScriptFunction = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { content: 'Computed.' };
  return { tool_calls: [{ name: 'terminal', arguments: { command: CPU_COMMAND } }] };
};

export const CPU_COMMAND = "awk 'BEGIN { for (i = 0; i < 4000000; i++) s += i * i; print s }'";

export default script;
