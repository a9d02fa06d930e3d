// traj mock-server --script examples/compress/long-script.mjs (docs/compress.md): a model that prints
// 1..400 with the terminal as many times as its prompt says, then answers; it writes the summary
// when traj compress asks for one (Hermes' summarisation prompt).
export default function script(request, { turn }) {
  const prompt = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  if (prompt.startsWith('Summarize the following agent conversation turns'))
    return { content: '[CONTEXT SUMMARY]: The assistant printed the numbers 1 to 400 with the terminal several times; every command succeeded.' };
  const times = Number(/(\d+) times/.exec(prompt)?.[1] ?? 1);
  if (turn >= times) return { content: `Done: printed the numbers ${times} times.` };
  // Call ids of its own: the server's count requests across rollouts, so their lengths (and tokens) would vary.
  const call = { id: `call_${turn + 1}`, name: 'terminal', arguments: { command: 'seq 1 400' } };
  return { content: `Printing, round ${turn + 1}.`, tool_calls: [call] };
}
