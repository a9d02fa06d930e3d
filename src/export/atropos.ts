import type { RecordOrder } from '../run/store.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { ShardUnit } from './shards.js';

/**
 * One line per group, with the field names of Atropos' `ScoredDataGroup` where they apply:
 * `scores` (one reward per rollout) and `messages` (each rollout's OpenAI messages). `tokens` and
 * `masks` are left out: they need the policy's tokenizer and chat template, which the trainer
 * has. Atropos' `advantages` are per token, so they are null here; the run's scalar advantages
 * travel under `traj` with the rollout ids.
 */
export interface AtroposGroupLine {
  group: string;
  scores: number[];
  messages: TrajectoryRecord['messages'][];
  advantages: null;
  ref_logprobs: null;
  group_overrides: null;
  overrides: null;
  traj: { ids: string[]; finish_reasons: string[]; advantages: Array<number | null> };
}

/** The store order that keeps a group's rollouts together, groups in dataset order. */
export const GROUP_ORDER: RecordOrder = 'group';

export interface AtroposCounts {
  /** Rollouts left out because they have no reward (unscored, or the reward hook failed). */
  unscored: number;
}

/**
 * Fold records (ordered by GROUP_ORDER) into group lines. A rollout without a reward cannot be
 * trained on and is left out (and counted); a group left with no rollout is dropped.
 */
export function* atroposGroups(
  records: Iterable<TrajectoryRecord>,
  counts: AtroposCounts,
): Generator<ShardUnit<string>> {
  let current: AtroposGroupLine | undefined;
  const finish = function* (): Generator<ShardUnit<string>> {
    if (current && current.scores.length > 0) {
      const line = JSON.stringify(current);
      yield { value: line, bytes: line.length };
    }
  };
  for (const record of records) {
    const group = record.group ?? record.id;
    if (current?.group !== group) {
      yield* finish();
      current = {
        group,
        scores: [],
        messages: [],
        advantages: null,
        ref_logprobs: null,
        group_overrides: null,
        overrides: null,
        traj: { ids: [], finish_reasons: [], advantages: [] },
      };
    }
    if (record.reward === null) {
      counts.unscored++;
      continue;
    }
    current.scores.push(record.reward);
    current.messages.push(record.messages);
    current.traj.ids.push(`${record.id}#${record.sample}`);
    current.traj.finish_reasons.push(record.finish_reason);
    current.traj.advantages.push(record.advantage);
  }
  yield* finish();
}
