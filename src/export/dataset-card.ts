import { stringify } from 'yaml';
import type { RunStatistics } from '../run/run-statistics.js';
import type { RunMeta, ShapingTotals } from '../run/store.js';
import type { QualityCounts, QualityFilterName } from './quality-filters.js';
import { canonicalJson, sha256 } from '../util/hash.js';
import { TRAJECTORY_SCHEMA_VERSION } from './arrow-schema.js';
import type { CardFeature } from './card-features.js';
import type { ExportFormat, ExportView, SplitBy } from './export-options.js';

export interface CardSplit {
  name: string;
  description: string;
  rows: number;
  files: string[];
}

/** A column of the exported rows, for the card's schema table. */
export interface CardColumn {
  name: string;
  type: string;
  description: string;
}

/** `traj compress`'s settings and totals, when the export is of the compressed records. */
export interface CardShaping {
  spec: Record<string, unknown>;
  totals: ShapingTotals;
}

export interface CardInput {
  run: string;
  meta: RunMeta | undefined;
  /** Statistics of the whole store; `generated_at` is left out so an unchanged export gives an unchanged card. */
  statistics: Omit<RunStatistics, 'generated_at'>;
  splits: CardSplit[];
  columns: CardColumn[];
  /** `dataset_info.features` for traj's own schema (absent for the atropos and hermes formats). */
  features?: CardFeature[];
  format: ExportFormat;
  view: ExportView;
  splitBy?: SplitBy;
  filter?: string;
  left: { filteredOut: number; unscored: number; failedWithoutRecord: number; pending: number };
  /** The Hub repository (ORG/NAME) when pushed; else the local folder for the loading example. */
  repository?: string;
  folder: string;
  compress?: CardShaping;
  quality?: { enabled: QualityFilterName[]; counts: QualityCounts };
}

const SIZE_CATEGORIES: Array<[number, string]> = [
  [1e3, 'n<1K'],
  [1e4, '1K<n<10K'],
  [1e5, '10K<n<100K'],
  [1e6, '100K<n<1M'],
  [1e7, '1M<n<10M'],
  [1e8, '10M<n<100M'],
  [1e9, '100M<n<1B'],
];

/** The Hub's size category for a row count. */
export function sizeCategory(rows: number): string {
  return SIZE_CATEGORIES.find(([limit]) => rows < limit)?.[1] ?? 'n>1B';
}

/**
 * The dataset card (README.md): the Hub's YAML header (one config whose data_files name every
 * split, task categories, size category; the license is left out because the run cannot know
 * it), then the run's settings from the store, the export's choices, the statistics and the schema.
 * Everything comes from the store and the options, so the same export gives the same bytes.
 */
export function renderDatasetCard(input: CardInput): string {
  return `${[`---\n${stringify(cardHeader(input))}---`, ...cardBody(input)].join('\n\n')}\n`;
}

function cardHeader(input: CardInput): Record<string, unknown> {
  const rows = input.splits.reduce((sum, split) => sum + split.rows, 0);
  const rewarded = input.format === 'atropos' || input.statistics.rewards.scored > 0;
  return {
    pretty_name: `traj run ${input.run}`,
    configs: [
      {
        config_name: 'default',
        data_files: input.splits.map((split) => ({ split: split.name, path: `data/${split.name}-*` })),
      },
    ],
    // The loader types every data file with these, JSON lines included (not per file from its values).
    ...(input.features ? { dataset_info: { features: input.features } } : {}),
    task_categories: rewarded ? ['text-generation', 'reinforcement-learning'] : ['text-generation'],
    tags: [
      'traj',
      'agent-trajectories',
      'tool-use',
      ...(input.view !== 'messages' && input.format !== 'atropos' ? ['sharegpt'] : []),
    ],
    size_categories: [sizeCategory(rows)],
  };
}

function cardBody(input: CardInput): string[] {
  const meta = input.meta;
  const model = input.statistics.model ?? 'unknown';
  const kind = meta?.kind ?? 'unknown';
  return [
    `# traj run \`${input.run}\``,
    `Trajectories of a tool-using agent, produced by a traj \`${kind}\` run with model \`${model}\` and exported by \`traj export\` as ${formatName(input.format)}.`,
    `## Loading\n\n\`\`\`python\nfrom datasets import load_dataset\n\nds = load_dataset(${JSON.stringify(input.repository ?? input.folder)}, split=${JSON.stringify(input.splits[0]?.name ?? 'train')})\n\`\`\``,
    `## Splits\n\n${table(
      ['split', 'rows', 'files', 'what'],
      input.splits.map((split) => [split.name, String(split.rows), String(split.files.length), split.description]),
    )}`,
    `## Run settings\n\n${table(['setting', 'value'], settingsRows(meta))}`,
    `## Export\n\n${table(['choice', 'value'], exportRows(input))}`,
    ...compressSection(input.compress),
    ...qualitySection(input.quality),
    `## Statistics\n\nOver the whole run store (every status), not only the exported rows.\n\n${table(['measure', 'value'], statisticsRows(input.statistics))}`,
    ...toolTable(input.statistics),
    `## Schema\n\n${schemaNote(input)}\n\n${table(
      ['column', 'type', 'meaning'],
      input.columns.map((column) => [column.name, `\`${column.type}\``, column.description]),
    )}`,
  ];
}

function formatName(format: ExportFormat): string {
  return {
    parquet: 'Parquet',
    jsonl: 'JSON Lines',
    arrow: 'Arrow IPC (stream format)',
    atropos: 'Atropos ScoredDataGroup JSON lines (one line per group)',
    hermes: 'hermes-agent batch-runner JSON lines (one line per rollout)',
    tokens: 'Parquet of token ids, assistant masks and logprobs (one row per rollout)',
  }[format];
}

function settingsRows(meta: RunMeta | undefined): string[][] {
  if (!meta) return [['run', 'no settings recorded in the store']];
  const parts = meta.fingerprint_parts;
  const toolsets = parts.toolsets as
    | { distribution?: string; probabilities?: Record<string, number>; fixed?: string[] }
    | undefined;
  const environment = parts.environment as { name?: string; version?: string } | undefined;
  const systemPrompt = typeof parts.system_prompt === 'string' ? parts.system_prompt : null;
  const rows: Array<[string, unknown]> = [
    ['kind', meta.kind],
    ['model', parts.model],
    ['tool call format', parts.tool_call_format],
    ['sampling', parts.sampling],
    [
      'toolsets',
      toolsets?.distribution
        ? `distribution \`${toolsets.distribution}\` ${canonicalJson(toolsets.probabilities ?? {})}`
        : toolsets?.fixed
          ? toolsets.fixed.join(', ')
          : undefined,
    ],
    ['environment', environment ? `${environment.name}@${environment.version}` : undefined],
    ['dataset', meta.config.dataset],
    ['max turns', parts.max_turns],
    ['seed', parts.seed],
    ['agent', parts.agent],
    ['sandbox', parts.sandbox],
    [
      'system prompt',
      systemPrompt === null
        ? 'default'
        : `${systemPrompt.length} characters, sha256 ${sha256(systemPrompt).slice(0, 12)} (the exact text is each row's first message)`,
    ],
    ['fingerprint', meta.fingerprint],
    ['started', meta.created_at],
    ['last resumed', meta.updated_at],
  ];
  return rows
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([name, value]) => [name, typeof value === 'string' ? value : canonicalJson(value)]);
}

function exportRows(input: CardInput): string[][] {
  return [
    ['format', formatName(input.format)],
    ...(input.format === 'atropos' || input.format === 'hermes'
      ? []
      : [
          ['view', viewText(input.view)],
          ['schema version', `${TRAJECTORY_SCHEMA_VERSION} (Parquet/Arrow metadata \`traj.schema_version\`)`],
        ]),
    ['split by', input.splitBy ?? 'none (done rows only)'],
    ['filter', input.filter ? `\`${input.filter.replace(/\|/g, '\\|')}\`` : 'none'],
    ['rows left out by the filter', String(input.left.filteredOut)],
    ...(input.format === 'atropos' ? [['rollouts left out without a reward', String(input.left.unscored)]] : []),
    ['failed rows without a record (not exported)', String(input.left.failedWithoutRecord)],
    ['pending rows (not exported)', String(input.left.pending)],
  ];
}

function compressSection(shaping: CardShaping | undefined): string[] {
  if (!shaping) return [];
  const { spec, totals } = shaping;
  const summarizer = spec.summarizer as { model?: string; base_url?: string } | undefined;
  const rows = [
    ['budget (tokens per record)', String(spec.max_tokens)],
    ['tokenizer', String(spec.tokenizer)],
    ['summariser model', `${summarizer?.model ?? 'unknown'} (${summarizer?.base_url ?? 'unknown'})`],
    ['summary target (tokens)', String(spec.summary_target_tokens)],
    ['last turns kept whole', String(spec.protect_last_turns)],
    ['records shaped', String(totals.records)],
    ['compressed', String(totals.compressed)],
    ['under the budget as they were', String(totals.under_budget)],
    ['over the limit after compression (not exported)', String(totals.over_limit)],
    ['tokens before / after', `${totals.tokens_before} / ${totals.tokens_after}`],
    ['turns summarised', String(totals.turns_summarised)],
    ['summary calls', String(totals.summary_calls)],
  ];
  return [
    `## Compression\n\nRecords fitted to the budget by \`traj compress\` (Hermes' trajectory_compressor method: the first system, human, assistant and tool turns and the last turns kept byte for byte, the turns after the head replaced by one \`[CONTEXT SUMMARY]:\` human turn).\n\n${table(['measure', 'value'], rows)}`,
  ];
}

const QUALITY_TEXT: Record<QualityFilterName, string> = {
  unknown_tool: 'calls a tool it was not offered (--quality)',
  malformed_arguments: "tool-call arguments invalid against the tool's schema (--quality)",
  empty_answer: 'empty final answer (--quality)',
  duplicate_prompt: 'same prompt as an earlier record (--dedupe)',
  duplicate_answer: 'same normalised final answer as an earlier record (--dedupe)',
  contaminated: 'prompt shares a 13-gram with a benchmark item (--decontaminate)',
};

function qualitySection(quality: CardInput['quality']): string[] {
  if (!quality) return [];
  const rows = quality.enabled.map((name) => [name, QUALITY_TEXT[name], String(quality.counts[name])]);
  return [
    `## Quality filters\n\nRecords dropped at export time, each counted under the first filter that drops it.\n\n${table(['filter', 'drops a record that', 'dropped'], rows)}`,
  ];
}

function viewText(view: ExportView): string {
  return {
    both: 'both: `conversations` (ShareGPT) and `messages` (OpenAI)',
    sharegpt: 'sharegpt: `conversations` only',
    messages: 'messages: `messages` only',
  }[view];
}

function statisticsRows(stats: CardInput['statistics']): string[][] {
  const prompts = stats.prompts;
  return [
    [
      'rows (done / discarded / failed / pending)',
      `${prompts.total} (${prompts.done} / ${prompts.discarded} / ${prompts.failed} / ${prompts.pending})`,
    ],
    ['bad dataset rows', String(prompts.bad_rows)],
    ['finish reasons', canonicalJson(stats.finish_reasons)],
    ['reasoning coverage', `${Math.round(stats.reasoning_coverage * 1000) / 10}%`],
    [
      'tokens (prompt / completion / reasoning)',
      `${stats.tokens.prompt} / ${stats.tokens.completion} / ${stats.tokens.reasoning}`,
    ],
    [
      'rewards (scored, mean, errors)',
      `${stats.rewards.scored}, ${stats.rewards.mean ?? '—'}, ${stats.rewards.errors}`,
    ],
    ['wall time', `${Math.round(stats.wall_time_ms / 1000)} s over ${stats.segments} invocation(s)`],
    ...(Object.keys(prompts.failed_by_code).length
      ? [['failures by code', canonicalJson(prompts.failed_by_code)]]
      : []),
  ];
}

function toolTable(stats: CardInput['statistics']): string[] {
  if (stats.tools.length === 0) return [];
  return [
    `### Tool calls\n\n${table(
      ['tool', 'calls', 'ok', 'errors', 'error rate'],
      stats.tools.map((tool) => [
        tool.name,
        String(tool.calls),
        String(tool.ok),
        String(tool.errors),
        String(tool.error_rate),
      ]),
    )}`,
  ];
}

function schemaNote(input: CardInput): string {
  if (input.format === 'tokens')
    return "One row per rollout: `prompt_ids + completion_ids` is the chat template's rendering of the conversation, tokenised with the policy's tokenizer; `completion_mask` is 1 exactly on the tokens the policy sampled (the endpoint's own ids where it returned them), `completion_logprobs` their logprobs (null elsewhere). `drift` names assistant turns whose endpoint ids differ from re-tokenising their text.";
  if (input.format === 'atropos')
    return 'One line per group of rollouts that share an item (`group`), with the field names of Atropos `ScoredDataGroup`. Without --tokenizer `tokens`/`masks` are absent (tokenize `messages` in the trainer); with it they are filled, see docs/tokens.md.';
  if (input.format === 'hermes')
    return "One line per rollout, as hermes-agent's batch runner writes it (`json.dumps(..., ensure_ascii=False)`); see traj's README, \"Hermes mapping\", for what differs from traj's own record.";
  return (
    'Every row and every traj run share this schema, whatever a row holds (tool calls or not, reasoning or not, a reward or not), ' +
    'and the Parquet, Arrow and JSON Lines exports share it: a JSON line has exactly these columns, nesting and value types ' +
    '(null where a row has no value). Free-form objects (`tools`, `scores`, `reward_details`, `error`, `source.fields`, ' +
    'a message’s `reasoning_details`, `echo` and content parts) are JSON strings. `dataset_info.features` in the header ' +
    'declares the same types for `datasets`.'
  );
}

function table(header: string[], rows: string[][]): string {
  const escapeCell = (cell: string) => cell.replace(/\n/g, ' ');
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}
