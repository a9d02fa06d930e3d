import { z } from 'zod';
import type { EvalReport } from './report-schema.js';

/** A rollout that broke the reference agents' promise: the oracle must solve it, the no-op must not. */
export const BrokenItemSchema = z.object({
  key: z.string(),
  sample: z.number().int().nonnegative(),
  reward: z.number().nullable(),
  reason: z.string(),
});
export type BrokenItem = z.infer<typeof BrokenItemSchema>;

export const ReferenceCheckSchema = z.object({
  agent: z.enum(['oracle', 'noop']),
  /** The reward every rollout of this agent must earn. */
  expected_reward: z.number(),
  checked: z.number().int().nonnegative(),
  broken: z.array(BrokenItemSchema),
  /** Broken in the run, then as expected when run again alone (timing-sensitive tests, contention). */
  flaky: z.array(BrokenItemSchema),
  /** How many times each broken item was run again alone before being called broken. */
  rechecks: z.number().int().nonnegative(),
});
export type ReferenceCheck = z.infer<typeof ReferenceCheckSchema>;

/** A rollout that failed for infrastructure reasons (no record), as the store lists it. */
export interface FailedRollout {
  key: string;
  sample: number;
  message: string;
}

const EXPECTED_REWARD = { oracle: 1, noop: 0 } as const;

/**
 * Validate an environment with a reference agent: every rollout of the oracle must earn reward
 * 1.0 and every rollout of the no-op 0.0. Anything else (another reward, a reward error, a
 * failed rollout) marks the item as broken: its setup, tests or reference solution need a look.
 */
export function checkReferenceAgent(
  agent: 'oracle' | 'noop',
  report: EvalReport,
  failed: readonly FailedRollout[],
): ReferenceCheck {
  const expected = EXPECTED_REWARD[agent];
  const broken: BrokenItem[] = [];
  for (const item of report.items) {
    if (item.reward === expected) continue;
    const reason =
      item.reward === null
        ? `reward error: ${item.reward_error ?? 'no reward'}`
        : agent === 'oracle'
          ? `the reference solution scored ${item.reward}, expected ${expected}`
          : `doing nothing scored ${item.reward}, expected ${expected}`;
    broken.push({ key: item.key, sample: item.sample, reward: item.reward, reason });
  }
  for (const rollout of failed)
    broken.push({
      key: rollout.key,
      sample: rollout.sample,
      reward: null,
      reason: `rollout failed: ${rollout.message}`,
    });
  broken.sort((a, b) => a.key.localeCompare(b.key) || a.sample - b.sample);
  return {
    agent,
    expected_reward: expected,
    checked: report.items.length + failed.length,
    broken,
    flaky: [],
    rechecks: 0,
  };
}

/** What one run-again of a broken item gave: its reward, or why it has none. */
export interface RecheckOutcome {
  reward: number | null;
  reason: string;
}

/**
 * Run each broken item again, alone, up to `times` times: one that then earns the expected
 * reward is flaky (its tests are timing-sensitive or it lost a race for the machine), not broken.
 */
export async function recheckBroken(
  check: ReferenceCheck,
  times: number,
  runAgain: (item: BrokenItem) => Promise<RecheckOutcome>,
): Promise<ReferenceCheck> {
  if (times === 0 || check.broken.length === 0) return { ...check, rechecks: times };
  const broken: BrokenItem[] = [];
  const flaky: BrokenItem[] = [...check.flaky];
  for (const item of check.broken) {
    let last: RecheckOutcome | undefined;
    for (let attempt = 1; attempt <= times; attempt++) {
      last = await runAgain(item);
      if (last.reward === check.expected_reward) break;
    }
    if (last?.reward === check.expected_reward)
      flaky.push({ ...item, reason: `${item.reason}; as expected when run again alone` });
    else
      broken.push({
        ...item,
        reason: `${item.reason}; again when run alone (${times}×): ${last?.reason ?? 'not run'}`,
      });
  }
  return { ...check, broken, flaky, rechecks: times };
}
