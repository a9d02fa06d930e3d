// traj eval --env examples/eval/flaky-env.mjs (docs/eval.md): an environment whose checker
// crashes on even items, to show that a reward that throws is recorded as an error, not a 0.
export default {
  name: 'flaky',
  version: '1',
  items: () => [1, 2, 3, 4].map((n) => ({ n })),
  id: (item) => `item-${item.n}`,
  prompt: (item) => `Say the number ${item.n}`,
  toolsets: [],
  reward(item) {
    if (item.n % 2 === 0) throw new Error(`checker crashed on item ${item.n}`);
    return 1;
  },
};
