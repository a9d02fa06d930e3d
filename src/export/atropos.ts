import type { RecordOrder } from '../run/store.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { ShardUnit } from './shards.js';
import type { TokenRow } from './tokens-format.js';

/**
 * One line per group, with the field names of Atropos' `ScoredDataGroup` where they apply:
 * `scores` (one reward per rollout) and `messages` (each rollout's OpenAI messages). `tokens` and
 * `masks` are left out: they need the policy's tokenizer and chat template, which the trainer
 * has. Atropos' `advantages` are per token, so they are null here; the run's scalar advantages
 * travel under `traj` with the rollout ids.
 */
export interface AtroposGroupLine {
  group: string;
  /** With a tokenizer: each rollout's prompt + completion ids. */
  tokens?: number[][];
  /** With a tokenizer: -100 where the policy did not sample the token, the token's id where it did. */
  masks?: number[][];
  scores: number[];
  messages: TrajectoryRecord['messages'][];
  advantages: null;
  /** The sampling policy's logprobs per token (1.0 where masked), when every rollout has them. */
  ref_logprobs: number[][] | null;
  inference_logprobs?: number[][] | null;
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
  tokens?: (record: TrajectoryRecord) => TokenRow | undefined,
): Generator<ShardUnit<string>> {
  let current: AtroposGroupLine | undefined;
  const finish = function* (): Generator<ShardUnit<string>> {
    if (current && current.scores.length > 0) {
      const line = JSON.stringify(withLogprobs(current));
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
    if (tokens) {
      const row = tokens(record);
      // Dropped (past --max-tokens, not traceable): the note says so; the group goes on without it.
      if (!row) continue;
      addTokens(current, row);
    }
    current.scores.push(record.reward);
    current.messages.push(record.messages);
    current.traj.ids.push(`${record.id}#${record.sample}`);
    current.traj.finish_reasons.push(record.finish_reason);
    current.traj.advantages.push(record.advantage);
  }
  yield* finish();
}

/** Masked-out positions' logprobs, by Atropos' convention. */
const MASKED_LOGPROB = 1.0;
const MASKED = -100;

function addTokens(line: AtroposGroupLine, row: TokenRow): void {
  const ids = [...row.prompt_ids, ...row.completion_ids];
  const sampled = [...row.prompt_ids.map(() => 0), ...row.completion_mask];
  (line.tokens ??= []).push(ids);
  (line.masks ??= []).push(ids.map((id, position) => (sampled[position] === 1 ? id : MASKED)));
  const logprobs = [...row.prompt_ids.map(() => null), ...row.completion_logprobs];
  const complete = sampled.every((mask, position) => mask === 0 || logprobs[position] !== null);
  (line.inference_logprobs ??= []).push(
    // An empty list marks a rollout without logprobs; withLogprobs then drops the field.
    complete ? logprobs.map((value, position) => (sampled[position] === 1 ? value! : MASKED_LOGPROB)) : [],
  );
}

/** Logprobs go out only when every rollout of the group has them, as both fields trainers read. */
function withLogprobs(line: AtroposGroupLine): AtroposGroupLine {
  const logprobs = line.inference_logprobs;
  if (!logprobs) return line;
  const complete = logprobs.length > 0 && logprobs.every((list) => list.length > 0);
  return { ...line, inference_logprobs: complete ? logprobs : null, ref_logprobs: complete ? logprobs : null };
}
