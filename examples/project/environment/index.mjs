// An environment for `traj eval --env ./environment` and the suite in ../suite.yaml.
// It is plain JavaScript (traj loads .js/.mjs modules); the fields are those of traj's
// defineEnvironment (src/eval/environment.ts), which only checks the type.
import { readFileSync } from 'node:fs';

export default {
  name: 'my-environment',
  // Bump it when items, prompts or rewards change: it is part of a run's fingerprint.
  version: '1',
  description: 'write a file with the right content',

  // The items: one JSON object a line of the dataset (config.yaml's, or --dataset FILE).
  *items({ dataset, limit }) {
    const lines = readFileSync(dataset, 'utf8').split('\n').filter((line) => line.trim());
    for (const line of lines.slice(0, limit ?? lines.length)) yield JSON.parse(line);
  },
  // A stable key per item, so a resumed run skips the finished ones.
  id: (item) => item.id,
  // What the model is asked.
  prompt: (item) => item.instruction,

  // Runs after the agent, over the same sandbox: the reward reads what the agent left there,
  // never what it claims. A throw is recorded as a reward error, never as a silent 0.
  async reward(item, _result, context) {
    const text = await context.readFile(item.file).then(
      (data) => data.toString().trim(),
      () => null,
    );
    return { score: text === item.expected ? 1 : 0, details: { file: item.file, found: text } };
  },

  // The reference solution (`--agent oracle`): it acts through the real tools, so a suite can be
  // checked without a model. Every item must score 1 with it.
  async oracle(item, context) {
    await context.callTool('write_file', { path: item.file, content: `${item.expected}\n` });
    return `Wrote ${item.file}.`;
  },
};
