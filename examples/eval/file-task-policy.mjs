// traj mock-server --script examples/eval/file-task-policy.mjs (docs/eval.md): a scripted policy
// for `traj eval --env file-task`. It solves three tasks and gets approve-draft wrong on purpose:
// it copies draft.md instead of renaming it, so the reward's evidence has something to show.
const COMMANDS = [
  ['sum of 17, 25 and 58', 'echo 100 > report.txt'],
  ['even numbers from 1 to 10', "mkdir -p numbers && printf '2\\n4\\n6\\n8\\n10\\n' > numbers/evens.txt"],
  ['count.sh', "printf 'wc -l < data.csv\\n' > count.sh"],
  ['Rename draft.md', 'cp draft.md final.md && echo approved >> final.md'],
];

export default function script(request, { turn }) {
  const task = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  if (turn > 0) return { content: 'Done.' };
  const command = COMMANDS.find(([words]) => task.includes(words))?.[1] ?? 'true';
  return { tool_calls: [{ name: 'terminal', arguments: { command } }] };
}
