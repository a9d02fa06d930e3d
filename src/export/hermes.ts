import { hermesLine, toHermesRecord } from '../trajectory/hermes-record.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { CardColumn } from './dataset-card.js';
import type { ShardUnit } from './shards.js';

/** Prompts per batch in hermes-agent's batch runner examples; sets metadata.batch_num. */
export const HERMES_BATCH_SIZE = 10;

/**
 * One line per rollout, as hermes-agent's batch runner writes it (see trajectory/hermes-record.ts).
 * `knownTools` (every tool Hermes registers, HERMES_TOOL_NAMES) pads tool_stats, as Hermes pads with every tool it knows.
 */
export function* hermesLines(
  records: Iterable<TrajectoryRecord>,
  knownTools: readonly string[],
  batchSize = HERMES_BATCH_SIZE,
): Generator<ShardUnit<string>> {
  for (const record of records) {
    const line = hermesLine(toHermesRecord(record, { knownTools, batchSize }));
    yield { value: line, bytes: line.length };
  }
}

export const HERMES_COLUMNS: CardColumn[] = [
  { name: 'prompt_index', type: 'int', description: 'the row of the input dataset (0 when unknown)' },
  {
    name: 'conversations',
    type: 'list<{from, value}>',
    description: 'ShareGPT turns in Hermes\' template: system (tools with "required": null), human, gpt, tool',
  },
  {
    name: 'metadata',
    type: '{batch_num, timestamp, model}',
    description: 'batch_num = prompt_index // 10; timestamp = end of the rollout (UTC, no zone, Python isoformat)',
  },
  { name: 'completed', type: 'bool', description: 'the agent gave a final answer on its own' },
  {
    name: 'partial',
    type: 'bool',
    description: "Hermes' meaning (gave up after invalid tool calls): always false, traj never gives up on those",
  },
  { name: 'api_calls', type: 'int', description: 'model requests made' },
  { name: 'toolsets_used', type: 'list<string>', description: 'toolsets offered to the rollout' },
  {
    name: 'tool_stats',
    type: 'dict<tool, {count, success, failure}>',
    description: "every built-in tool (zeros when unused), outcomes judged Hermes' way",
  },
  { name: 'tool_error_counts', type: 'dict<tool, int>', description: 'failures per tool, every built-in tool listed' },
];
