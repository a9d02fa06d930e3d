import { basename } from 'node:path';
import { ConfigError } from '../errors.js';
import {
  compileFilter,
  DEFAULT_HUB_URL,
  ExportFormatSchema,
  ExportViewSchema,
  exportRun,
  pushToHub,
  SplitBySchema,
  type ExportResult,
  type PushResult,
} from '../export/index.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import { stringOption, type CommandDefinition, type ParsedCommand } from './command.js';
import { locateStore } from './run-store-path.js';

export const command: CommandDefinition = {
  name: 'export',
  summary:
    'turn a run store into a Hugging Face dataset (Parquet/JSONL/Arrow/Atropos/Hermes + card), optionally pushed to the Hub',
  usage:
    'traj export RUN [--format parquet|jsonl|arrow|atropos|hermes|tokens] [--view both|sharegpt|messages] [--split-by status|toolsets|category] [--filter EXPR] [--push ORG/NAME] [options]',
  allowPositionals: true,
  options: {
    format: {
      type: 'string',
      value: 'FORMAT',
      description:
        'parquet, jsonl, arrow (IPC stream): one schema, declared in the card; atropos (one ScoredDataGroup line per group), hermes (hermes-agent batch-runner lines) or tokens (Parquet of token ids, masks and logprobs; needs --tokenizer, unless the run was made with tokenizer: in its config)',
      default: 'parquet',
    },
    view: {
      type: 'string',
      value: 'VIEW',
      description: 'conversation columns: both, sharegpt (conversations) or messages',
      default: 'both',
    },
    'split-by': {
      type: 'string',
      value: 'KEY',
      description:
        'status (done/discarded/failed splits), toolsets or category (source.fields.category); default one train split of done rows',
    },
    filter: {
      type: 'string',
      value: 'EXPR',
      description: 'keep rows matching EXPR, e.g. \'reward >= 0.5 and finish_reason == "stop"\'',
    },
    out: { type: 'string', value: 'DIR', description: 'dataset folder (default datasets/RUN)' },
    'shard-size': {
      type: 'string',
      value: 'MB',
      description: 'a shard closes once its rows reach this many MB of record JSON',
      default: '500',
    },
    checkpoints: { type: 'string', value: 'DIR', description: 'folder of run stores', default: 'checkpoints' },
    push: {
      type: 'string',
      value: 'ORG/NAME',
      description: 'push the exported folder to this Hub dataset repository in one commit',
    },
    private: { type: 'boolean', description: 'create the Hub repository private' },
    revision: {
      type: 'string',
      value: 'BRANCH',
      description: 'Hub branch to commit to (created from main when missing)',
      default: 'main',
    },
    'hub-url': {
      type: 'string',
      value: 'URL',
      description: 'Hub endpoint (else $HF_ENDPOINT, else https://huggingface.co)',
    },
    'token-env': {
      type: 'string',
      value: 'VAR',
      description: 'environment variable holding the Hub token',
      default: 'HF_TOKEN',
    },
    tokenizer: {
      type: 'string',
      value: 'ID|DIR',
      description:
        "the policy's tokenizer and chat template (Hub model id or a folder with tokenizer.json): needed by tokens and --max-tokens (default: the run config's tokenizer:), fills atropos tokens/masks/logprobs",
    },
    'max-tokens': {
      type: 'string',
      value: 'N',
      description: 'the training length: rollouts longer than N tokens are dropped (or truncated, --over-length)',
    },
    compressed: {
      type: 'boolean',
      description: 'export the records as traj compress fitted them to its budget (over-limit ones left out)',
    },
    quality: {
      type: 'boolean',
      description:
        "drop records that call a tool not offered, pass arguments invalid against the tool's schema, or end without an answer",
    },
    dedupe: {
      type: 'boolean',
      description: 'keep the first record of each prompt and of each normalised final answer',
    },
    decontaminate: {
      type: 'string',
      value: 'FILE',
      description: 'drop records whose prompt shares a 13-gram with an item of FILE (JSON lines or plain lines)',
    },
    'over-length': {
      type: 'string',
      value: 'drop|truncate',
      description: 'what --max-tokens does to a longer rollout',
      default: 'drop',
    },
  },
  details: `RUN is a run name (checkpoints/RUN.sqlite) or the path of a .sqlite run store.
Output: DIR/data/<split>-00000-of-0000N.<ext> and DIR/README.md (the dataset card).
Filter language: fields of the record (reward, finish_reason, turns, toolsets, usage.prompt_tokens,
  tool_stats.name, source.fields.X, …), == != < <= > >= contains in, and/or/not, parentheses,
  lists ["a", "b"], len(x), strings, numbers, true/false/null.
Examples:
  traj export demo                                   # Parquet + card in datasets/demo/
  traj export demo --split-by status --format jsonl
  traj export demo --filter 'toolsets contains "terminal" and turns < 10'
  traj export evalrun --format atropos               # one line per group: scores + messages
  traj export demo --format hermes                   # lines as hermes-agent's batch runner writes them
  HF_TOKEN=hf_... traj export demo --push my-org/demo-trajectories --private
  traj export demo --format tokens --tokenizer Qwen/Qwen3-8B --max-tokens 8192   # see docs/tokens.md
  traj export demo --compressed --quality --dedupe --decontaminate bench.jsonl     # see docs/compress.md
A second push of an unchanged export commits nothing (files are compared by digest first).`,
  async run({ values, positionals }) {
    if (positionals.length !== 1)
      throw new ConfigError('traj export: give exactly one RUN (a run name or a .sqlite path)', { code: 'cli_usage' });
    const storePath = locateStore(positionals[0]!, stringOption(values, 'checkpoints') ?? 'checkpoints');
    const run = basename(storePath, '.sqlite');
    const format = choice(values, 'format', ExportFormatSchema.options) ?? 'parquet';
    if (format === 'atropos' && values.view !== undefined)
      throw new ConfigError('--view does not apply to --format atropos (a group line carries messages)', {
        code: 'cli_usage',
      });
    if (format === 'hermes' && values.view !== undefined)
      throw new ConfigError("--view does not apply to --format hermes (a line carries Hermes' conversations)", {
        code: 'cli_usage',
      });
    const filter = stringOption(values, 'filter');
    if (filter !== undefined) checkFilter(filter);
    const repository = stringOption(values, 'push');
    const token = repository ? hubToken(values) : undefined;
    const result = await exportRun({
      storePath,
      format,
      view: choice(values, 'view', ExportViewSchema.options),
      splitBy: choice(values, 'split-by', SplitBySchema.options),
      filter,
      shardSizeMb: shardSize(values),
      out: stringOption(values, 'out') ?? defaultOutputDirectory(run),
      repository,
      tokenizer: stringOption(values, 'tokenizer'),
      maxTokens: maxTokens(values),
      overLength: choice(values, 'over-length', ['drop', 'truncate'] as const),
      compressed: values.compressed === true,
      quality: values.quality === true,
      dedupe: values.dedupe === true,
      decontaminate: stringOption(values, 'decontaminate'),
    });
    process.stdout.write(formatExport(result, format));
    process.stdout.write(formatNotes(result));
    if (!repository || !token) return 0;
    const pushed = await pushToHub({
      directory: result.directory,
      files: result.files,
      repository,
      token,
      hubUrl: stringOption(values, 'hub-url') ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_URL,
      revision: stringOption(values, 'revision') ?? 'main',
      private: values.private === true,
      commitTitle: `traj export of run ${result.run} (${result.rows} rows)`,
    });
    process.stdout.write(formatPush(pushed));
    return 0;
  },
};

/** A filter that does not parse is a usage error (exit 2), reported before anything is written. */
function checkFilter(filter: string): void {
  try {
    compileFilter(filter);
  } catch (error) {
    throw new ConfigError((error as Error).message, { code: 'cli_usage', cause: error });
  }
}

function choice<T extends string>(values: ParsedCommand['values'], name: string, allowed: readonly T[]): T | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw new ConfigError(`--${name}: expected one of ${allowed.join(', ')}, got '${value}'`, { code: 'cli_usage' });
  return value as T;
}

function maxTokens(values: ParsedCommand['values']): number | undefined {
  const raw = stringOption(values, 'max-tokens');
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new ConfigError(`--max-tokens: expected a positive whole number of tokens, got '${raw}'`, {
      code: 'cli_usage',
    });
  return value;
}

/** One line per record the token pass did something to: dropped, truncated, skipped, or drift found. */
function formatNotes(result: ExportResult): string {
  return result.notes.map((note) => `  ${note.outcome} ${note.id}#${note.sample}: ${note.detail}\n`).join('');
}

function shardSize(values: ParsedCommand['values']): number | undefined {
  const raw = stringOption(values, 'shard-size');
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`--shard-size: expected a positive number of MB, got '${raw}'`, { code: 'cli_usage' });
  return value;
}

/** The Hub token from the environment; its value is never printed, only the variable's name. */
function hubToken(values: ParsedCommand['values']): string {
  const variable = stringOption(values, 'token-env') ?? 'HF_TOKEN';
  const token = process.env[variable];
  if (!token)
    throw new ConfigError(
      `--push needs a Hugging Face token in $${variable} (or name another variable with --token-env)`,
      { code: 'cli_usage' },
    );
  return token;
}

function formatExport(result: ExportResult, format: string): string {
  const unit = format === 'atropos' ? 'groups' : 'rows';
  const lines = [`exported ${result.rows} ${unit} of run '${result.run}' as ${format} to ${result.directory}/`];
  const width = Math.max(...result.splits.map((split) => split.name.length));
  for (const split of result.splits) {
    const files = split.files.length === 1 ? split.files[0]! : `${split.files.length} files (${split.files[0]} …)`;
    lines.push(
      `  ${split.name.padEnd(width)}  ${String(split.rows).padStart(6)} ${unit}  ${humanBytes(split.bytes).padStart(9)}  ${files}`,
    );
  }
  const left = result.left;
  const notes = [
    left.filteredOut ? `${left.filteredOut} left out by --filter` : '',
    left.unscored ? `${left.unscored} rollouts without a reward left out` : '',
    left.failedWithoutRecord ? `${left.failedWithoutRecord} failed rows have no record` : '',
    left.pending ? `${left.pending} rows still pending` : '',
  ].filter(Boolean);
  if (notes.length) lines.push(`  not exported: ${notes.join('; ')}`);
  if (result.compress)
    lines.push(
      `  compressed to ${result.compress.spec.max_tokens} tokens: ${result.compress.totals.compressed} compressed, ${result.compress.totals.over_limit} over the limit left out`,
    );
  if (result.quality)
    lines.push(
      `  quality filters dropped: ${result.quality.enabled.map((name) => `${name} ${result.quality!.counts[name]}`).join(', ')}`,
    );
  lines.push(`card: ${result.card}`);
  return `${lines.join('\n')}\n`;
}

function formatPush(result: PushResult): string {
  const target = `${result.repository}@${result.revision}`;
  const created = result.created ? `created ${result.repository}; ` : '';
  if (!result.commit)
    return `${created}${target} already holds this export (${result.unchanged.length} files unchanged): nothing committed\n`;
  const counts = `${result.uploaded.length} uploaded, ${result.unchanged.length} unchanged, ${result.deleted.length} deleted`;
  return `${created}pushed to ${target}: commit ${result.commit.oid} (${counts})\n  ${result.commit.url}\n`;
}

function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
