/**
 * Statistics of an eval: pure functions over rewards, so they are tested against hand-computed
 * values and shared by `traj eval`, `traj bench` and the reports.
 */

/** A value with a two-sided confidence interval (null bounds when the sample is too small). */
export interface Estimate {
  value: number | null;
  low: number | null;
  high: number | null;
  /** How many observations the estimate rests on. */
  n: number;
}

const Z_975 = 1.959963984540054;

/** Student t quantiles t(0.975, df) for df 1..30; larger df use the Cornish–Fisher expansion below. */
const T_975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%). */
export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be a whole number ≥ 1, got ${df}`);
  if (df <= T_975.length) return T_975[df - 1]!;
  // Cornish–Fisher expansion of t around the normal quantile; error below 1e-4 for df > 30.
  const z = Z_975;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Population standard deviation (the spread of a group, not an estimate of a wider one). */
export function populationStd(values: readonly number[]): number {
  const average = mean(values);
  if (average === null) return 0;
  let squares = 0;
  for (const value of values) squares += (value - average) ** 2;
  return Math.sqrt(squares / values.length);
}

/**
 * Mean with a 95% Student-t interval: mean ± t(0.975, n−1) · s / √n, s the sample standard
 * deviation. With fewer than two observations there is no interval. `bounds` clips the interval
 * to where the mean can lie (rewards in [0, 1] have their mean in [0, 1] too).
 */
export function meanInterval(values: readonly number[], bounds?: readonly [number, number]): Estimate {
  const n = values.length;
  const average = mean(values);
  if (average === null || n < 2) return { value: average, low: null, high: null, n };
  let squares = 0;
  for (const value of values) squares += (value - average) ** 2;
  const half = (tQuantile975(n - 1) * Math.sqrt(squares / (n - 1))) / Math.sqrt(n);
  const [lowest, highest] = bounds ?? [-Infinity, Infinity];
  return { value: average, low: Math.max(lowest, average - half), high: Math.min(highest, average + half), n };
}

/** A proportion with its 95% Wilson score interval (well behaved at 0, 1 and small n). */
export function wilsonInterval(successes: number, n: number): Estimate {
  if (n === 0) return { value: null, low: null, high: null, n };
  const p = successes / n;
  const z2 = Z_975 ** 2;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (Z_975 / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { value: p, low: Math.max(0, center - half), high: Math.min(1, center + half), n };
}

/**
 * The unbiased pass@k estimator of Chen et al. (2021) for one item with n samples of which c
 * passed: 1 − C(n−c, k) / C(n, k), computed as a product so large n never overflows.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new RangeError(`pass@k needs 1 ≤ k ≤ n (k=${k}, n=${n})`);
  if (c < 0 || c > n) throw new RangeError(`pass@k needs 0 ≤ c ≤ n (c=${c}, n=${n})`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

export interface ItemOutcomes {
  /** Scored samples of the item. */
  n: number;
  /** Of those, how many passed. */
  passed: number;
}

/**
 * pass@k for every k from 1 to the largest sample count, each averaged over the items that have
 * at least k scored samples (an item with fewer cannot say anything about pass@k).
 */
export function passAtKTable(items: readonly ItemOutcomes[]): Record<string, number> {
  const largest = Math.max(0, ...items.map((item) => item.n));
  const table: Record<string, number> = {};
  for (let k = 1; k <= largest; k++) {
    const eligible = items.filter((item) => item.n >= k);
    table[String(k)] = eligible.reduce((sum, item) => sum + passAtK(item.n, item.passed, k), 0) / eligible.length;
  }
  return table;
}

export const ADVANTAGE_EPSILON = 1e-6;

/**
 * Group-relative advantages (GRPO style): (reward − group mean) / (group std + ε), std the
 * population standard deviation of the group's rewards. Null rewards stay null and do not count.
 */
export function groupAdvantages(rewards: readonly (number | null)[]): (number | null)[] {
  const scored = rewards.filter((reward): reward is number => reward !== null);
  const average = mean(scored);
  const spread = populationStd(scored);
  return rewards.map((reward) =>
    reward === null || average === null ? null : (reward - average) / (spread + ADVANTAGE_EPSILON),
  );
}

/** Share of judges agreeing with the majority pass/fail verdict (ties count as fail). */
export function majorityAgreement(passes: readonly boolean[]): { pass: boolean; agreement: number } {
  if (passes.length === 0) return { pass: false, agreement: 0 };
  const yes = passes.filter(Boolean).length;
  const pass = yes * 2 > passes.length;
  return { pass, agreement: (pass ? yes : passes.length - yes) / passes.length };
}
