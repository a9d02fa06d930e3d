// traj mock-server --script examples/cost/priced-calls.mjs (docs/cost.md): every prompt is two
// calls, a terminal command and then the answer, and every call reports the same usage: 1,250
// prompt tokens (1,100 of them cached) and 50 completion tokens. It reports no cost of its own,
// so what a run spends comes from its pricing: table.
const usage = { prompt_tokens: 1250, cached_tokens: 1100, completion_tokens: 50 };

export default function script(request, { turn }) {
  if (turn === 0) return { tool_calls: [{ name: 'terminal', arguments: { command: 'echo checked' } }], usage };
  return { content: 'Done.', usage };
}
