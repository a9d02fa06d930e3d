import type * as Arrow from 'apache-arrow';
import type { Message, Usage } from '../model/messages.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { ArrowModule } from './arrow-schema.js';
import type { ExportView } from './export-options.js';

/**
 * A record as the values of the export schema's columns. Every key of every struct is present
 * (null when the record lacks it), so the Arrow builders never see a shape they do not expect.
 */
export function toArrowRow(record: TrajectoryRecord, view: ExportView): Record<string, unknown> {
  return {
    id: record.id,
    sample: record.sample,
    ...(view !== 'messages'
      ? { conversations: record.conversations.map((turn) => ({ from: turn.from, value: turn.value })) }
      : {}),
    ...(view !== 'sharegpt' ? { messages: record.messages.map(messageRow) } : {}),
    tools: JSON.stringify(record.tools),
    toolsets: record.toolsets,
    model: record.model,
    completed: record.completed,
    partial: record.partial,
    finish_reason: record.finish_reason,
    turns: record.turns,
    api_calls: record.api_calls,
    tool_stats: record.tool_stats.map((stat) => ({
      name: stat.name,
      calls: stat.calls,
      ok: stat.ok,
      errors: stat.errors,
    })),
    usage: usageRow(record.usage),
    compressions: (record.compressions ?? []).map((c) => ({
      ...c,
      ...Object.fromEntries(
        (['at_call', 'at_message', 'tokens_before', 'tokens_after', 'replaced_start', 'replaced_end'] as const).map(
          (key) => [key, BigInt(c[key])],
        ),
      ),
    })),
    memory: record.memory ?? null,
    skills_viewed: record.skills_viewed ?? [],
    has_reasoning: record.has_reasoning,
    reward: record.reward,
    scores: JSON.stringify(record.scores),
    reward_details: jsonOrNull(record.reward_details),
    reward_error: record.reward_error,
    group: record.group,
    advantage: record.advantage,
    source: {
      dataset: record.source.dataset,
      row: record.source.row === null ? null : BigInt(record.source.row),
      fields: JSON.stringify(record.source.fields),
    },
    timing: { ...record.timing },
    error: jsonOrNull(record.error),
    // Records stored before the images field existed have none.
    images: record.images ?? [],
    // Likewise artifacts (schema version 3).
    artifacts: record.artifacts ?? [],
    // Records stored before schema version 4 have neither.
    subagents: (record.subagents ?? []).map((child) => ({
      ...child,
      messages: child.messages.map(messageRow),
      usage: usageRow(child.usage),
    })),
    code_calls: record.code_calls ?? [],
    // Schema version 6; records without a simulated user (and older ones) have null.
    simulated_user: record.simulated_user
      ? { ...record.simulated_user, usage: usageRow(record.simulated_user.usage) }
      : null,
  };
}

function usageRow(usage: Usage): Record<string, unknown> {
  return {
    prompt_tokens: BigInt(usage.prompt_tokens),
    completion_tokens: BigInt(usage.completion_tokens),
    reasoning_tokens: BigInt(usage.reasoning_tokens),
    cached_tokens: BigInt(usage.cached_tokens ?? 0),
    cost: usage.cost ?? null,
    // Records from before cost accounting (schema version 5) have neither.
    cost_source: usage.cost_source ?? null,
    unpriced_models: usage.unpriced_models ?? [],
  };
}

function messageRow(message: Message): Record<string, unknown> {
  const assistant = message.role === 'assistant' ? message : undefined;
  return {
    role: message.role,
    // Content parts (a user message with images) are kept as their JSON text: the column type is fixed.
    content:
      typeof message.content === 'string' || message.content === null
        ? message.content
        : JSON.stringify(message.content),
    reasoning: assistant?.reasoning ?? null,
    reasoning_details: jsonOrNull(assistant?.reasoning_details),
    images: assistant?.images ?? null,
    tool_calls:
      assistant?.tool_calls?.map((call) => ({
        id: call.id,
        type: call.type,
        function: { name: call.function.name, arguments: call.function.arguments },
      })) ?? null,
    echo: jsonOrNull(assistant?.echo),
    tool_call_id: message.role === 'tool' ? message.tool_call_id : null,
    name: message.role === 'tool' ? (message.name ?? null) : null,
  };
}

function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** One record batch (one Parquet row group) of rows in the given schema. */
export function recordBatchOf(
  arrow: ArrowModule,
  schema: Arrow.Schema,
  rows: Record<string, unknown>[],
): Arrow.RecordBatch[] {
  const vector = arrow.vectorFromArray(rows, new arrow.Struct(schema.fields));
  return vector.data.map((data) => new arrow.RecordBatch(schema, data as Arrow.Data<Arrow.Struct>));
}
