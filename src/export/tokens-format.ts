import type * as Arrow from 'apache-arrow';
import { describeDrift, tokenTrace, type ChatTokenizer, type TokenTrace } from '../tokens/index.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { ArrowModule } from './arrow-schema.js';
import { parquetShards } from './parquet-format.js';
import type { ShardFormat } from './shards.js';

/** Bumped when a column of the tokens export is added, removed or changes type. */
export const TOKENS_SCHEMA_VERSION = '1';

/**
 * The tokens export (`traj export --format tokens`): one row per rollout, what an RL trainer
 * reads. `prompt_ids + completion_ids` is the chat template's rendering of the conversation,
 * tokenised; `completion_mask` is 1 on the tokens the policy sampled (the endpoint's ids where
 * it sent them), 0 on tool results and template text; `completion_logprobs` holds the
 * endpoint's logprob of each sampled token, null elsewhere. docs/tokens.md documents it.
 */
export function tokensSchema(arrow: ArrowModule): Arrow.Schema {
  const { Field, List, Utf8, Int32, Int8, Float64, Bool } = arrow;
  const list = (type: Arrow.DataType, nullableItems = false) => new List(new Field('item', type, nullableItems));
  const fields = [
    new Field('id', new Utf8(), false),
    new Field('sample', new Int32(), false),
    new Field('group', new Utf8(), true),
    new Field('reward', new Float64(), true),
    new Field('advantage', new Float64(), true),
    new Field('prompt_ids', list(new Int32()), false),
    new Field('completion_ids', list(new Int32()), false),
    new Field('completion_mask', list(new Int8()), false),
    new Field('completion_logprobs', list(new Float64(), true), false),
    new Field('truncated', new Bool(), false),
    new Field('drift', list(new Utf8()), false),
  ];
  return new arrow.Schema(fields, new Map([['traj.tokens_schema_version', TOKENS_SCHEMA_VERSION]]));
}

export interface TokenRow {
  id: string;
  sample: number;
  group: string | null;
  reward: number | null;
  advantage: number | null;
  prompt_ids: number[];
  completion_ids: number[];
  completion_mask: number[];
  completion_logprobs: Array<number | null>;
  truncated: boolean;
  drift: string[];
}

/** What the tokens export did to one record beyond writing it whole: said per record. */
export interface TokenNote {
  id: string;
  sample: number;
  outcome: 'dropped' | 'truncated' | 'skipped' | 'drift';
  detail: string;
}

export interface TokenRowOptions {
  /** The training length: longer rollouts are dropped or truncated (`overLength`). */
  maxTokens?: number;
  overLength: 'drop' | 'truncate';
}

export async function tokensFormat(): Promise<ShardFormat<TokenRow>> {
  const arrow = await import('apache-arrow');
  return parquetShards(tokensSchema(arrow), (row: TokenRow) => ({ ...row }));
}

/**
 * A record's row, or undefined (with a note saying why) when it cannot be one: a compressed
 * conversation (the model saw a summary, not these messages), a template that does not render
 * it as one growing sequence, or a rollout past --max-tokens with overLength drop.
 */
export function tokenRow(
  record: TrajectoryRecord,
  tokenizer: ChatTokenizer,
  options: TokenRowOptions,
  notes: TokenNote[],
): TokenRow | undefined {
  const note = (outcome: TokenNote['outcome'], detail: string) =>
    notes.push({ id: record.id, sample: record.sample, outcome, detail });
  if ((record.compressions ?? []).length > 0) {
    note('skipped', 'its context was compressed: the model saw summaries, not one growing conversation');
    return undefined;
  }
  const outcome = tokenTrace(tokenizer, {
    messages: record.messages,
    tools: record.tools,
    completions: record.completions ?? [],
  });
  if (!outcome.ok) {
    note('skipped', outcome.reason);
    return undefined;
  }
  const drift = outcome.trace.drift.map((entry) => describeDrift(tokenizer, entry));
  for (const line of drift) note('drift', line);
  const fitted = fitLength(outcome.trace, options, note);
  if (!fitted) return undefined;
  return {
    id: record.id,
    sample: record.sample,
    group: record.group,
    reward: record.reward,
    advantage: record.advantage,
    prompt_ids: fitted.trace.promptIds,
    completion_ids: fitted.trace.completionIds,
    completion_mask: fitted.trace.completionMask,
    completion_logprobs: fitted.trace.completionLogprobs,
    truncated: fitted.truncated,
    drift,
  };
}

function fitLength(
  trace: TokenTrace,
  options: TokenRowOptions,
  note: (outcome: TokenNote['outcome'], detail: string) => void,
): { trace: TokenTrace; truncated: boolean } | undefined {
  const total = trace.promptIds.length + trace.completionIds.length;
  const max = options.maxTokens;
  if (max === undefined || total <= max) return { trace, truncated: false };
  const room = max - trace.promptIds.length;
  if (options.overLength === 'drop' || room <= 0) {
    const why = room <= 0 ? `its prompt alone is ${trace.promptIds.length} tokens` : `${total} tokens`;
    note('dropped', `${why} > --max-tokens ${max}`);
    return undefined;
  }
  note('truncated', `${total} tokens cut to ${max} (--max-tokens)`);
  return {
    truncated: true,
    trace: {
      ...trace,
      completionIds: trace.completionIds.slice(0, room),
      completionMask: trace.completionMask.slice(0, room),
      completionLogprobs: trace.completionLogprobs.slice(0, room),
    },
  };
}
