import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ConfigError, RunError } from '../errors.js';
import { computeStatistics } from '../run/run-statistics.js';
import { RunStore, type RecordOrder } from '../run/store.js';
import { HERMES_TOOL_NAMES } from '../tools/hermes-tool-names.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { arrowFormat } from './arrow-format.js';
import { hermesLines } from './hermes.js';
import { atroposGroups, GROUP_ORDER, type AtroposCounts } from './atropos.js';
import { cardColumns, cardFeatures } from './card-columns.js';
import { renderDatasetCard, type CardInput, type CardShaping, type CardSplit } from './dataset-card.js';
import { ExportOptionsSchema, type ExportOptions, type ExportOptionsInput, type ExportView } from './export-options.js';
import { exportRecords, type ExportedRecord, type RecordCounts } from './export-records.js';
import { compileFilter } from './filter-evaluate.js';
import { qualityFilter, type QualityCounts, type QualityFilterName } from './quality-filters.js';
import { jsonlFormat, trajectoryLine } from './jsonl-format.js';
import { parquetFormat } from './parquet-format.js';
import { tokenRow, tokensFormat, type TokenNote, type TokenRow } from './tokens-format.js';
import { loadChatTokenizer } from '../tokens/index.js';
import {
  DEFAULT_BATCH_BYTES,
  DEFAULT_BATCH_ROWS,
  discardShards,
  fileSize,
  publishShards,
  writeSplitShards,
  type ShardFormat,
  type ShardUnit,
  type WrittenSplit,
} from './shards.js';
import { planSplits, unexportedCounts, type SplitPlan } from './split-plan.js';

export interface ExportRunInput extends ExportOptionsInput {
  /** The run store (checkpoints/<run>.sqlite). */
  storePath: string;
}

export interface ExportedSplit extends CardSplit {
  bytes: number;
}

export interface ExportResult {
  run: string;
  directory: string;
  splits: ExportedSplit[];
  rows: number;
  /** Every file this export wrote, relative to `directory` (what a push uploads). */
  files: string[];
  card: string;
  left: { filteredOut: number; unscored: number; failedWithoutRecord: number; pending: number };
  /** Per record: dropped or truncated by --max-tokens, skipped (not traceable), or drift (tokens, atropos with a tokenizer). */
  notes: TokenNote[];
  /** Records each quality filter dropped (--quality, --dedupe, --decontaminate), when any is on. */
  quality?: { enabled: QualityFilterName[]; counts: QualityCounts };
  /** With --compressed: the compression's settings and totals (over-limit records are not exported). */
  compress?: CardShaping;
}

/** How one split's records become shard rows in the chosen format. */
interface SplitWriter {
  format: ShardFormat<unknown>;
  order?: RecordOrder;
  units(records: Generator<ExportedRecord>): Iterator<ShardUnit<unknown>>;
}

/**
 * Export a run store as a Hugging Face dataset folder: `data/<split>-NNNNN-of-NNNNN.<ext>` shards
 * streamed from the store, and a README.md dataset card. Shards are written under temporary
 * names and put in place only when every split succeeded, so a failed export leaves the
 * previous one intact.
 */
export async function exportRun(input: ExportRunInput): Promise<ExportResult> {
  const options = withRunTokenizer(ExportOptionsSchema.parse(input), input.storePath);
  checkExportOptions(options, input.storePath);
  const predicate = options.filter ? compileFilter(options.filter) : undefined;
  const quality = qualityFilter(options);
  const store = RunStore.open(input.storePath);
  try {
    const compress = options.compressed ? shapingOf(store) : undefined;
    const run = store.meta()?.name ?? 'run';
    const counts: RecordCounts & AtroposCounts = { filteredOut: 0, unscored: 0 };
    const notes: TokenNote[] = [];
    const tokenizer = options.tokenizer ? await loadChatTokenizer(options.tokenizer) : undefined;
    const tokens = tokenizer ? (record: TrajectoryRecord) => tokenRow(record, tokenizer, options, notes) : undefined;
    const writer = await splitWriter(options.format, options.view, counts, tokens);
    const dataDirectory = join(options.out, 'data');
    const limits = {
      shardBytes: options.shardSizeMb * 1024 * 1024,
      batchRows: DEFAULT_BATCH_ROWS,
      batchBytes: DEFAULT_BATCH_BYTES,
    };
    const plans = planSplits(store, options.splitBy);
    const written: WrittenSplit[] = [];
    try {
      for (const plan of plans) {
        const records = exportRecords(store, plan, predicate, counts, writer.order, {
          compressed: options.compressed,
          quality,
        });
        const rows = writer.units(records);
        const split = await writeSplitShards(rows, writer.format, dataDirectory, plan.name, limits);
        if (split.rows > 0) written.push(split);
      }
      if (written.length === 0) throw nothingToExport(run, options.filter, counts);
    } catch (error) {
      discardShards(written);
      throw error;
    }
    const published = publishShards(dataDirectory, written, writer.format.extension);
    const splits = written.map((split) => describeSplit(split, plans, published.get(split.split)!, dataDirectory));
    const left = { ...counts, ...unexportedCounts(store) };
    const { generated_at: _generated, ...statistics } = computeStatistics(store);
    const card = renderDatasetCard({
      run,
      meta: store.meta(),
      statistics,
      splits,
      columns: await cardColumns(options.format, options.view),
      features: await cardFeatures(options.format, options.view),
      format: options.format,
      view: options.view,
      splitBy: options.splitBy,
      filter: options.filter,
      left,
      repository: options.repository,
      folder: options.out,
      compress,
      quality: quality && { enabled: quality.enabled, counts: quality.counts },
    });
    const cardPath = join(options.out, 'README.md');
    writeFileAtomically(cardPath, card);
    writeExportStatistics(options.out, statistics, { splits, left, quality, compress });
    return {
      run,
      directory: options.out,
      splits,
      rows: splits.reduce((sum, split) => sum + split.rows, 0),
      files: [...splits.flatMap((split) => split.files), 'README.md', 'statistics.json'],
      card: cardPath,
      left,
      notes,
      ...(quality ? { quality: { enabled: quality.enabled, counts: quality.counts } } : {}),
      ...(compress ? { compress } : {}),
    };
  } finally {
    store.close();
  }
}

/**
 * Where the export needs a tokenizer (tokens, --max-tokens) and none is given, the one the run
 * was made with (`tokenizer:` in its config): the policy's, whose ids the records may carry.
 */
function withRunTokenizer(options: ExportOptions, storePath: string): ExportOptions {
  const needed = options.format === 'tokens' || options.maxTokens !== undefined;
  if (options.tokenizer || !needed || !existsSync(storePath)) return options;
  const store = RunStore.open(storePath);
  try {
    const configured = store.meta()?.config.tokenizer;
    return typeof configured === 'string' && configured !== '' ? { ...options, tokenizer: configured } : options;
  } finally {
    store.close();
  }
}

/** Options that cannot go together, and a missing store: usage errors before anything is read. */
function checkExportOptions(options: ExportOptions, storePath: string): void {
  if (!existsSync(storePath)) throw new RunError(`no run store at ${storePath}`, { code: 'store_not_found' });
  if (options.format === 'tokens' && !options.tokenizer)
    throw new ConfigError(
      "--format tokens needs --tokenizer (a Hugging Face model id or a folder with tokenizer.json) when the run's config set no tokenizer:",
      {
        code: 'cli_usage',
      },
    );
  if (options.maxTokens !== undefined && !options.tokenizer)
    throw new ConfigError("--max-tokens counts tokens: give --tokenizer too (the run's config set no tokenizer:)", {
      code: 'cli_usage',
    });
  if (options.format === 'atropos' && options.splitBy)
    throw new ConfigError('--split-by does not apply to --format atropos: a line is a whole group', {
      code: 'cli_usage',
    });
  if (options.compressed && options.splitBy === 'status')
    throw new ConfigError(
      '--compressed exports done rows (what traj compress shapes): --split-by status does not apply',
      {
        code: 'cli_usage',
      },
    );
}

/** The card's numbers as data beside it: the run's statistics and what this export kept and dropped. */
function writeExportStatistics(
  directory: string,
  statistics: CardInput['statistics'],
  exported: {
    splits: Array<{ rows: number }>;
    left: unknown;
    quality?: { enabled: QualityFilterName[]; counts: QualityCounts };
    compress?: CardShaping;
  },
): void {
  const section = {
    rows: exported.splits.reduce((sum, split) => sum + split.rows, 0),
    left: exported.left,
    ...(exported.quality ? { quality: { enabled: exported.quality.enabled, dropped: exported.quality.counts } } : {}),
    ...(exported.compress ? { compressed: exported.compress } : {}),
  };
  writeFileAtomically(
    join(directory, 'statistics.json'),
    `${JSON.stringify({ ...statistics, export: section }, null, 2)}\n`,
  );
}

/** What --compressed exports from: a finished compression of the run, or a clear error. */
function shapingOf(store: RunStore): CardShaping {
  const spec = store.shapingSpec();
  const totals = store.shapingTotals();
  if (!spec || !totals)
    throw new RunError(
      `run store ${store.path} has no compressed records: run traj compress first (docs/compress.md)`,
      {
        code: 'compress_unfinished',
      },
    );
  const left = store.unshapedKeys().length;
  if (left > 0)
    throw new RunError(
      `the compression of run store ${store.path} is not finished: ${left} records are not shaped yet (${totals.failed} failed); rerun traj compress with the same settings`,
      { code: 'compress_unfinished', details: { left } },
    );
  return { spec, totals };
}

async function splitWriter(
  format: ExportRunInput['format'],
  view: ExportView,
  counts: AtroposCounts,
  tokens: ((record: TrajectoryRecord) => TokenRow | undefined) | undefined,
): Promise<SplitWriter> {
  const asRecords = function* (records: Generator<ExportedRecord>) {
    for (const { row, record } of records) yield { value: record, bytes: row.text.length };
  };
  switch (format) {
    case 'jsonl': {
      const line = await trajectoryLine(view);
      return { format: jsonlFormat as ShardFormat<unknown>, units: (records) => jsonlLines(records, line) };
    }
    case 'arrow':
      return { format: (await arrowFormat(view)) as ShardFormat<unknown>, units: asRecords };
    case 'atropos':
      return {
        format: jsonlFormat as ShardFormat<unknown>,
        order: GROUP_ORDER,
        units: (records) => atroposGroups(recordsOf(records), counts, tokens),
      };
    case 'tokens':
      return {
        format: (await tokensFormat()) as ShardFormat<unknown>,
        units: (records) => tokenUnits(recordsOf(records), tokens!),
      };
    case 'hermes': {
      // Hermes' batch runner pads with every tool it registers; traj's own extra tools follow when used.
      const knownTools = HERMES_TOOL_NAMES;
      return {
        format: jsonlFormat as ShardFormat<unknown>,
        units: (records) => hermesLines(recordsOf(records), knownTools),
      };
    }
    default:
      return { format: (await parquetFormat(view)) as ShardFormat<unknown>, units: asRecords };
  }
}

function* tokenUnits(
  records: Iterable<TrajectoryRecord>,
  tokens: (record: TrajectoryRecord) => TokenRow | undefined,
): Generator<ShardUnit<TokenRow>> {
  for (const record of records) {
    const row = tokens(record);
    // About four bytes per id, mask and logprob each before compression.
    if (row) yield { value: row, bytes: 16 * (row.prompt_ids.length + row.completion_ids.length) + 256 };
  }
}

function* recordsOf(records: Generator<ExportedRecord>): Generator<TrajectoryRecord> {
  for (const { record } of records) yield record;
}

/** JSON lines of the records, each shaped by the export schema (see `trajectoryLine`). */
function* jsonlLines(
  records: Generator<ExportedRecord>,
  line: (record: TrajectoryRecord) => string,
): Generator<ShardUnit<string>> {
  for (const { record } of records) {
    const text = line(record);
    yield { value: text, bytes: text.length };
  }
}

function describeSplit(split: WrittenSplit, plans: SplitPlan[], names: string[], dataDirectory: string): ExportedSplit {
  const plan = plans.find((candidate) => candidate.name === split.split)!;
  const paths = names.map((name) => join(dataDirectory, name));
  return {
    name: split.split,
    description: plan.description,
    rows: split.rows,
    files: paths.map((path) => relative(join(dataDirectory, '..'), path)),
    bytes: paths.reduce((sum, path) => sum + fileSize(path), 0),
  };
}

function nothingToExport(run: string, filter: string | undefined, counts: RecordCounts & AtroposCounts): RunError {
  const reasons = [
    ...(counts.filteredOut ? [`the filter left out ${counts.filteredOut} rows`] : []),
    ...(counts.unscored
      ? [`${counts.unscored} rollouts have no reward (atropos needs rewards: export an eval run)`]
      : []),
  ];
  const why = reasons.length
    ? `: ${reasons.join('; ')}`
    : ' (no rows with a record in the chosen statuses; see `traj export --help` for --split-by status)';
  return new RunError(`nothing to export from run '${run}'${filter ? ` with --filter '${filter}'` : ''}${why}`, {
    code: 'nothing_to_export',
  });
}
