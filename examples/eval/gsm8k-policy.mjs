// traj mock-server --script examples/eval/gsm8k-policy.mjs (docs/eval.md): a policy for
// `traj eval --env gsm8k --dataset examples/eval/gsm8k-mini.jsonl`. It looks each question up
// and answers in the shapes the reward tolerates ($, commas, a trailing .0), but gets mini-4 wrong.
import { readFileSync } from 'node:fs';

const rows = readFileSync('examples/eval/gsm8k-mini.jsonl', 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));
const REPLIES = {
  'mini-1': (n) => `There are ${n}.0 loaves left.`,
  'mini-2': () => 'The answer is $1,350.',
  'mini-3': (n) => `He reads 9 * 14 pages.\n#### ${n}`,
  'mini-4': () => 'There are 8 teams.',
};

export default function script(request) {
  const question = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  const row = rows.find((candidate) => question.includes(candidate.question));
  if (!row) return { content: 'I do not know.' };
  return { content: REPLIES[row.id](row.answer.split('####').at(-1).trim()) };
}
