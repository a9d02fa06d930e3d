import { toolServicesFor, type AgentSettings } from '../agent/agent-settings.js';
import { DatasetError } from '../errors.js';
import type { AvailabilityContext } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { sampleToolsets, type Distribution } from '../tools/distributions.js';
import { readDataset, type ReadDatasetOptions } from '../dataset/index.js';
import type { RecordFilter } from './pipeline.js';
import type { PipelineEntry } from './work-item.js';
import { PromptKeyer } from './prompt-key.js';
import type { RunStore } from './store.js';

/** Where each prompt's toolsets come from: a distribution drawn per prompt, or a fixed list. */
export type ToolsetChoice = { distribution: Pick<Distribution, 'name' | 'toolsets'> } | { toolsets: string[] };

export interface BatchEntriesInput {
  dataset: string;
  reader: ReadDatasetOptions;
  choice: ToolsetChoice;
  seed: number;
  limit?: number;
  registry: ToolRegistry;
  store: RunStore;
  /**
   * Rows the dataset holds when known up front (a JSONL line count): statistics count them even if the
   * run stops early.
   */
  expectedRows?: number;
  /** Called once per toolset dropped from a draw because it is unavailable here. */
  onDrop?: (toolset: string, reason: string) => void;
  /** What tools' availability checks see (default: the environment only). */
  availability?: AvailabilityContext;
}

/**
 * The prompt dataset as pipeline entries: each row keyed (explicit id, else content hash plus
 * occurrence), its toolsets drawn from (seed, key) only, so a resume draws exactly the same.
 */
export async function* batchEntries(input: BatchEntriesInput): AsyncGenerator<PipelineEntry> {
  const keyer = new PromptKeyer({ source: input.dataset });
  const context = input.availability ?? { env: process.env };
  const available = (toolset: string): true | string => input.registry.unavailableReason(toolset, context) ?? true;
  if (input.expectedRows !== undefined)
    input.store.setCounter('dataset_rows', Math.min(input.expectedRows, input.limit ?? input.expectedRows));
  let rows = 0;
  let bad = 0;
  for await (const row of readDataset(input.dataset, input.reader)) {
    if (input.limit !== undefined && rows >= input.limit) break;
    rows++;
    if ('bad' in row) {
      bad++;
      yield { bad: true, line: row.line, reason: row.reason };
      continue;
    }
    const key = keyer.key(row);
    let toolsets: string[];
    if ('distribution' in input.choice) {
      const draw = sampleToolsets(input.choice.distribution, { seed: input.seed, key, available });
      for (const dropped of draw.dropped) {
        input.store.addToolsetDrop(dropped.toolset, key);
        input.onDrop?.(dropped.toolset, dropped.reason);
      }
      toolsets = draw.toolsets;
    } else toolsets = input.choice.toolsets;
    yield {
      key,
      sample: 0,
      rowIndex: row.index,
      group: null,
      task: { toolsets, messages: row.messages, system: row.system, image: row.image, workdir: row.cwd },
      // The same number a bad row is reported with (file:line), so a user finds either the same way.
      source: { dataset: input.dataset, row: row.line, fields: row.fields },
    };
  }
  input.store.setCounter('dataset_rows', rows);
  if (rows === 0)
    throw new DatasetError(`${input.dataset}: the dataset has no rows (nothing to run)`, {
      code: 'dataset_empty',
      details: { source: input.dataset },
    });
  if (bad === rows) {
    throw new DatasetError(
      `${input.dataset}: all ${rows} rows are malformed (skipped with --skip-bad-rows; see statistics.json "bad_rows")`,
      {
        code: 'dataset_all_bad',
        details: { source: input.dataset, rows },
      },
    );
  }
}

/** The toolsets a run may offer: every toolset of the distribution, or the fixed list. */
export function candidateToolsets(choice: ToolsetChoice): string[] {
  return 'distribution' in choice ? Object.keys(choice.distribution.toolsets) : choice.toolsets;
}

/** What availability checks on the main thread see: the run's tool settings, no model clients. */
export function availabilityContext(
  settings: Pick<AgentSettings, 'endpoint' | 'tools'>,
  env: NodeJS.ProcessEnv = process.env,
): AvailabilityContext {
  const noModel = () => {
    throw new Error('availability checks call no model');
  };
  return { env, services: toolServicesFor(settings, noModel) };
}

export function recordFilters(options: { requireReasoning: boolean; completedOnly: boolean }): RecordFilter[] {
  const filters: RecordFilter[] = [];
  if (options.requireReasoning)
    filters.push((record) => (record.has_reasoning ? undefined : 'no reasoning (--require-reasoning)'));
  if (options.completedOnly)
    filters.push((record) =>
      record.completed ? undefined : `not completed: ${record.finish_reason} (--completed-only)`,
    );
  return filters;
}
