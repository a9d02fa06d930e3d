import type { ScriptFunction } from '../../src/testing/index.js';

/**
 * The mock endpoint's script for the high-concurrency scenario: one `write_file` call, then a
 * short answer. Each rollout so makes two model calls and one real tool call in its sandbox.
 */
const script: ScriptFunction = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { content: 'Saved the note.' };
  return { tool_calls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'benchmark note\n' } }] };
};

export default script;
