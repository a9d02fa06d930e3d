import { groupAdvantages } from '../eval/metrics.js';
import { atroposGroups, type AtroposGroupLine } from '../export/atropos.js';
import { tokenRow, type TokenNote } from '../export/tokens-format.js';
import type { ChatTokenizer } from '../tokens/index.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { Policy } from './policy.js';

/**
 * One scored group as `traj serve` answers it: the rollouts of one item under one policy, with
 * each rollout's reward and group-relative advantage, its OpenAI messages and, with a tokenizer,
 * its tokens, masks and the policy's logprobs (Atropos' conventions: -100 where the policy did not
 * sample, 1.0 as the masked logprob).
 */
export interface ScoredGroup {
  group: string;
  /** The order groups were started in: a trainer can see what it got, and what it did not. */
  seq: number;
  item: string;
  policy_version: number;
  policy: Policy;
  scores: number[];
  advantages: number[];
  messages: TrajectoryRecord['messages'][];
  /** `${item key}#${sample}` per rollout. */
  ids: string[];
  finish_reasons: string[];
  tokens: number[][] | null;
  masks: number[][] | null;
  /** The policy's logprob of each token (1.0 where masked); null unless every rollout has them. */
  logprobs: number[][] | null;
  mean_reward: number;
}

export interface GroupInput {
  group: string;
  seq: number;
  item: string;
  policy: Policy;
  /** The group's landed records (done), any order. */
  records: TrajectoryRecord[];
  tokenizer?: ChatTokenizer;
  /** The training length: longer rollouts are truncated (the note says so). */
  maxTokens?: number;
  notes: TokenNote[];
}

/**
 * The records with their advantages, and the scored group built from them; undefined when no
 * rollout has a reward (nothing to train on). Advantages are over the group's scored rollouts.
 */
export function scoreGroup(input: GroupInput): { records: TrajectoryRecord[]; group: ScoredGroup | undefined } {
  const sorted = [...input.records].sort((a, b) => a.sample - b.sample);
  const advantages = groupAdvantages(sorted.map((record) => record.reward));
  const records = sorted.map((record, index) => ({ ...record, advantage: advantages[index] ?? null }));
  const tokens = input.tokenizer
    ? (record: TrajectoryRecord) =>
        tokenRow(record, input.tokenizer!, { maxTokens: input.maxTokens, overLength: 'truncate' }, input.notes)
    : undefined;
  const [unit] = [...atroposGroups(records, { unscored: 0 }, tokens)];
  if (!unit) return { records, group: undefined };
  const line = JSON.parse(unit.value) as AtroposGroupLine;
  if (line.scores.length === 0) return { records, group: undefined };
  return { records, group: fromLine(input, line) };
}

function fromLine(input: GroupInput, line: AtroposGroupLine): ScoredGroup {
  return {
    group: input.group,
    seq: input.seq,
    item: input.item,
    policy_version: input.policy.version,
    policy: input.policy,
    scores: line.scores,
    advantages: line.traj.advantages.map((advantage) => advantage ?? 0),
    messages: line.messages,
    ids: line.traj.ids,
    finish_reasons: line.traj.finish_reasons,
    tokens: line.tokens ?? null,
    masks: line.masks ?? null,
    logprobs: line.inference_logprobs ?? null,
    mean_reward: line.scores.reduce((sum, score) => sum + score, 0) / line.scores.length,
  };
}
