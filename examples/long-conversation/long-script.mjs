// traj mock-server --script examples/long-conversation/long-script.mjs (docs/context.md): a model
// that prints 1..300 with the terminal until its conversation has been compressed and it has
// printed it twice more, then answers. It writes the summary when traj asks for one.
export default function script(request, { turn }) {
  const text = request.messages.map((message) => String(message.content ?? '')).join('\n');
  if (text.startsWith('You compress')) return { content: 'The agent printed 1..300 several times; every command succeeded.' };
  if (text.includes('[CONTEXT SUMMARY]') && turn >= 5) return { content: 'Done: printed the numbers many times.' };
  return { tool_calls: [{ name: 'terminal', arguments: { command: 'seq 1 300' } }] };
}
