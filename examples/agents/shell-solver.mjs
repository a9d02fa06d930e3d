// A scripted model for third-party agents (traj mock-server --script): it calls whichever shell
// tool the agent offers to write report.txt with 100, then answers once the tool has answered.
const COMMAND = 'echo 100 > report.txt';

function shellCall(tools) {
  for (const tool of tools) {
    const properties = tool.function.parameters?.properties ?? {};
    if (properties.command?.type === 'string') return { name: tool.function.name, arguments: { command: COMMAND } };
    if (properties.command?.type === 'array')
      return { name: tool.function.name, arguments: { command: ['bash', '-lc', COMMAND] } };
    if (properties.cmd?.type === 'string') return { name: tool.function.name, arguments: { cmd: COMMAND } };
  }
  return undefined;
}

export default function solveWithShell(request) {
  if (!request.tools?.length) return { content: 'ok' };
  if (request.messages.at(-1)?.role === 'tool') return { content: 'Done: report.txt holds 100.' };
  const call = shellCall(request.tools);
  return call ? { tool_calls: [call] } : { content: 'no shell tool offered' };
}
