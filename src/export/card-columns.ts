import { tokensSchema } from './tokens-format.js';
import { trajectorySchema } from './arrow-schema.js';
import { datasetFeatures, type CardFeature } from './card-features.js';
import type { CardColumn } from './dataset-card.js';
import type { ExportFormat, ExportView } from './export-options.js';
import { HERMES_COLUMNS } from './hermes.js';

const MEANINGS: Record<string, string> = {
  id: "prompt key: the dataset row's id, else sha256 of the prompt plus its occurrence number",
  sample: 'sample index of this prompt (eval runs: 0..k-1)',
  conversations:
    'Hermes function-calling ShareGPT view: system (tool signatures + the run system prompt), human, gpt (<think> + <tool_call>), tool (<tool_response>)',
  messages:
    'the exact OpenAI-format messages the model saw and produced, the real system prompt first; reasoning kept per assistant message (with the provider’s reasoning_details and what was echoed back)',
  tools: 'JSON schemas of the tools offered (OpenAI `tools` entries)',
  toolsets: 'toolsets offered to this rollout',
  model: 'model name sent to the endpoint',
  completed: 'the agent gave a final answer on its own (finish_reason stop)',
  partial: 'not completed but the model answered at least once',
  finish_reason:
    'stop, max_turns, length, context_length, api_error, aborted, empty, content_filter, or another reason the model sent',
  turns: 'model calls that counted against max turns',
  api_calls: 'all model calls, retries of empty answers and the grace call included',
  tool_stats: 'per tool: calls, successes, errors',
  usage:
    "token counts summed over every model call of the rollout, judges and auxiliary models included (cached_tokens: prompt tokens served from the provider cache); cost in USD (provider-reported or from the run's pricing:, null when unknown), cost_source (provider, pricing, mixed, unknown) and unpriced_models (models whose calls have no known cost)",
  compressions:
    'context compressions: at which call, tokens before/after, the transcript range replaced, the summary; requests rebuild from messages + these',
  memory: 'the memory files (agent notes, user profile) as the rollout left them, with --memory; null otherwise',
  skills_viewed: 'skills the agent loaded with skill_view',
  has_reasoning: 'some assistant turn carried reasoning',
  reward: 'reward of an environment (null when not scored or the reward hook failed)',
  scores: 'named sub-scores',
  reward_details: 'evidence the reward hook kept (null when none)',
  reward_error: 'why the reward hook failed (null when it did not)',
  group: 'the item a set of samples belongs to (eval runs)',
  advantage: 'reward minus the group mean, over the group std (eval runs)',
  source: 'dataset path, row index and pass-through metadata (`fields`)',
  timing: 'start time and durations in milliseconds (total, model, tools)',
  error: 'the fault that failed the rollout (failed rows)',
  subagents:
    'delegate_task children, flattened: the call that started each, depth, goal, toolsets, exact messages, usage (included in `usage`), finish reason',
  simulated_user:
    "a simulated user's side of a multi-turn eval (its replies are the human turns): model, replies, why the conversation ended (stop_token, turn_limit, terminal_tool, user_empty, agent), its own usage (also counted in `usage`); null without one",
  code_calls:
    'tool calls made by execute_code scripts: the execute_code call id, tool, arguments, ok, ms, result (counted in tool_stats; not in messages)',
};

const TOKEN_MEANINGS: Record<string, string> = {
  id: 'prompt key',
  sample: 'sample number of the prompt',
  group: 'the item a set of samples belongs to (eval), else null',
  reward: 'the rollout reward, null when unscored',
  advantage: 'the group-normalised reward, when the run computed it',
  prompt_ids: "the chat template's rendering up to the first assistant turn, tokenised",
  completion_ids:
    'everything after: assistant turns (the endpoint’s ids where it returned them), tool results, template text',
  completion_mask: '1 on tokens the policy sampled, 0 on tool results and template text',
  completion_logprobs: 'the endpoint’s logprob of each sampled token; null where not sampled or not returned',
  truncated: 'true when --max-tokens cut the completion',
  drift: 'assistant turns whose endpoint ids differ from re-tokenising their text (their ids are kept)',
};

const ATROPOS_COLUMNS: CardColumn[] = [
  { name: 'group', type: 'string', description: 'the item the rollouts share (their `group`, else their prompt key)' },
  { name: 'scores', type: 'list<float>', description: 'one reward per rollout (ScoredDataGroup.scores)' },
  {
    name: 'messages',
    type: 'list<list<message>>',
    description: 'each rollout’s OpenAI-format messages (ScoredDataGroup.messages)',
  },
  { name: 'advantages', type: 'null', description: 'ScoredDataGroup per-token advantages: null (no tokens)' },
  { name: 'ref_logprobs', type: 'null', description: 'ScoredDataGroup.ref_logprobs: null' },
  { name: 'group_overrides', type: 'null', description: 'ScoredDataGroup.group_overrides: null' },
  { name: 'overrides', type: 'null', description: 'ScoredDataGroup.overrides: null' },
  {
    name: 'traj',
    type: 'object',
    description:
      'traj metadata per rollout, in order: ids (key#sample), finish_reasons, advantages (group-normalised scalar rewards when the run computed them)',
  },
];

/** The card's schema table, derived from the schema actually written (Parquet, Arrow and JSONL share one). */
export async function cardColumns(format: ExportFormat, view: ExportView): Promise<CardColumn[]> {
  if (format === 'atropos') return ATROPOS_COLUMNS;
  if (format === 'hermes') return HERMES_COLUMNS;
  const arrow = await import('apache-arrow');
  if (format === 'tokens')
    return tokensSchema(arrow).fields.map((field) => ({
      name: field.name,
      type: `${field.type.toString()}${field.nullable ? ' (nullable)' : ''}`,
      description: TOKEN_MEANINGS[field.name] ?? '',
    }));
  return trajectorySchema(arrow, view).fields.map((field) => ({
    name: field.name,
    type: `${field.type.toString()}${field.nullable ? ' (nullable)' : ''}`,
    description: MEANINGS[field.name] ?? '',
  }));
}

/**
 * The card's `dataset_info.features` for traj's own schema (Parquet, Arrow, JSONL); undefined for
 * the atropos and hermes formats, whose lines follow other projects' layouts.
 */
export async function cardFeatures(format: ExportFormat, view: ExportView): Promise<CardFeature[] | undefined> {
  if (format === 'atropos' || format === 'hermes') return undefined;
  const arrow = await import('apache-arrow');
  if (format === 'tokens') return datasetFeatures(arrow, tokensSchema(arrow));
  return datasetFeatures(arrow, trajectorySchema(arrow, view));
}
