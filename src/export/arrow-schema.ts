import type * as Arrow from 'apache-arrow';
import type { ExportView } from './export-options.js';

export type ArrowModule = typeof Arrow;

/** Bumped when a column is added, removed or changes type; stored in the schema metadata. */
export const TRAJECTORY_SCHEMA_VERSION = '6';

/** A column of the export: its name, whether it may be null, and its Arrow type. */
interface ColumnSpec {
  name: string;
  nullable: boolean;
  type: Arrow.DataType;
  /** Written only in these views (default: every view). */
  views?: ExportView[];
}

/**
 * The one schema of every exported row, whatever the row holds: rows with and without tool
 * calls, reasoning or rewards, and every run, get exactly these columns and types. Free-form
 * objects (tool JSON schemas, source.fields, scores, reward details, errors) are JSON strings,
 * because their shape differs from row to row. The view decides which conversation columns are
 * written; the schema is fixed per view.
 */
export function trajectorySchema(arrow: ArrowModule, view: ExportView): Arrow.Schema {
  const fields = columns(arrow)
    .filter((column) => !column.views || column.views.includes(view))
    .map((column) => new arrow.Field(column.name, column.type, column.nullable));
  return new arrow.Schema(
    fields,
    new Map([
      ['traj.schema_version', TRAJECTORY_SCHEMA_VERSION],
      ['traj.view', view],
    ]),
  );
}

/**
 * Token counts and cost of a rollout or a child; `cost_source` and `unpriced_models` say where the
 * cost came from and which models it leaves out (schema version 5).
 */
function usageType(arrow: ArrowModule): Arrow.DataType {
  const { Field, Struct, List, Utf8, Int64, Float64 } = arrow;
  const field = (name: string, type: Arrow.DataType, nullable = false) => new Field(name, type, nullable);
  return new Struct([
    ...['prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'cached_tokens'].map((name) =>
      field(name, new Int64()),
    ),
    field('cost', new Float64(), true),
    field('cost_source', new Utf8(), true),
    field('unpriced_models', new List(new Field('item', new Utf8(), false))),
  ]);
}

/** A simulated user's side of a conversation (schema version 6). */
function simulatedUserType(arrow: ArrowModule): Arrow.DataType {
  const { Field, Struct, Utf8, Int32 } = arrow;
  return new Struct([
    new Field('model', new Utf8(), false),
    new Field('turns', new Int32(), false),
    new Field('stop', new Utf8(), false),
    new Field('usage', usageType(arrow), false),
  ]);
}

/** A delegate_task child: its transcript in the messages column's type, its usage as the usage column's. */
function subagent(arrow: ArrowModule, message: Arrow.DataType): Arrow.DataType {
  const { Field, Struct, List, Utf8, Int32 } = arrow;
  const field = (name: string, type: Arrow.DataType, nullable = false) => new Field(name, type, nullable);
  return new Struct([
    field('call_id', new Utf8()),
    field('depth', new Int32()),
    field('goal', new Utf8()),
    field('toolsets', new List(new Field('item', new Utf8(), false))),
    field('messages', new List(new Field('item', message, false))),
    field('usage', usageType(arrow)),
    field('finish_reason', new Utf8()),
  ]);
}

/** Small builders of Arrow types, bound to the loaded module. */
function typeBuilders(arrow: ArrowModule) {
  const field = (name: string, type: Arrow.DataType, nullable = false) => new arrow.Field(name, type, nullable);
  return {
    field,
    text: () => new arrow.Utf8(),
    int: () => new arrow.Int64(),
    listOf: (type: Arrow.DataType) => new arrow.List(new arrow.Field('item', type, false)),
    struct: (fields: Arrow.Field[]) => new arrow.Struct(fields),
  };
}

/** A message as the `messages` column holds it; provider-shaped objects are JSON strings. */
function messageType(arrow: ArrowModule): Arrow.DataType {
  const { field, text, listOf, struct } = typeBuilders(arrow);
  const toolCall = struct([
    field('id', text()),
    field('type', text()),
    field('function', struct([field('name', text()), field('arguments', text())])),
  ]);
  return struct([
    field('role', text()),
    field('content', text(), true),
    field('reasoning', text(), true),
    // Provider-shaped objects differ per provider: JSON strings, like the other free-form fields.
    field('reasoning_details', text(), true),
    field('images', listOf(text()), true),
    field('tool_calls', listOf(toolCall), true),
    field('echo', text(), true),
    field('tool_call_id', text(), true),
    field('name', text(), true),
  ]);
}

function compressionType(arrow: ArrowModule): Arrow.DataType {
  const { field, text, int, struct } = typeBuilders(arrow);
  return struct([
    ...['at_call', 'at_message'].map((name) => field(name, int())),
    field('trigger', text()),
    ...['tokens_before', 'tokens_after', 'replaced_start', 'replaced_end'].map((name) => field(name, int())),
    field('summary', text()),
    field('todo', text(), true),
  ]);
}

function codeCallType(arrow: ArrowModule): Arrow.DataType {
  const { field, text, struct } = typeBuilders(arrow);
  return struct([
    field('call_id', text()),
    field('name', text()),
    field('arguments', text()),
    field('ok', new arrow.Bool()),
    field('ms', new arrow.Float64()),
    field('result', text()),
  ]);
}

function columns(arrow: ArrowModule): ColumnSpec[] {
  const { Int32, Int64, Float64, Bool } = arrow;
  const { field, text, listOf, struct } = typeBuilders(arrow);
  const message = messageType(arrow);
  return [
    { name: 'id', nullable: false, type: text() },
    { name: 'sample', nullable: false, type: new Int32() },
    {
      name: 'conversations',
      nullable: false,
      type: listOf(struct([field('from', text()), field('value', text())])),
      views: ['sharegpt', 'both'],
    },
    { name: 'messages', nullable: false, type: listOf(message), views: ['messages', 'both'] },
    { name: 'tools', nullable: false, type: text() },
    { name: 'toolsets', nullable: false, type: listOf(text()) },
    { name: 'model', nullable: false, type: text() },
    { name: 'completed', nullable: false, type: new Bool() },
    { name: 'partial', nullable: false, type: new Bool() },
    { name: 'finish_reason', nullable: false, type: text() },
    { name: 'turns', nullable: false, type: new Int32() },
    { name: 'api_calls', nullable: false, type: new Int32() },
    {
      name: 'tool_stats',
      nullable: false,
      type: listOf(
        struct([
          field('name', text()),
          field('calls', new Int32()),
          field('ok', new Int32()),
          field('errors', new Int32()),
        ]),
      ),
    },
    {
      name: 'usage',
      nullable: false,
      type: usageType(arrow),
    },
    { name: 'compressions', nullable: false, type: listOf(compressionType(arrow)) },
    {
      name: 'memory',
      nullable: true,
      type: struct([field('memory', listOf(text())), field('user', listOf(text()))]),
    },
    { name: 'skills_viewed', nullable: false, type: listOf(text()) },
    { name: 'has_reasoning', nullable: false, type: new Bool() },
    { name: 'reward', nullable: true, type: new Float64() },
    { name: 'scores', nullable: false, type: text() },
    { name: 'reward_details', nullable: true, type: text() },
    { name: 'reward_error', nullable: true, type: text() },
    { name: 'group', nullable: true, type: text() },
    { name: 'advantage', nullable: true, type: new Float64() },
    {
      name: 'source',
      nullable: false,
      type: struct([field('dataset', text()), field('row', new Int64(), true), field('fields', text())]),
    },
    {
      name: 'timing',
      nullable: false,
      type: struct([
        field('started_at', text()),
        field('duration_ms', new Float64()),
        field('model_ms', new Float64()),
        field('tool_ms', new Float64()),
      ]),
    },
    { name: 'error', nullable: true, type: text() },
    { name: 'images', nullable: false, type: listOf(text()) },
    { name: 'artifacts', nullable: false, type: listOf(text()) },
    { name: 'subagents', nullable: false, type: listOf(subagent(arrow, message)) },
    { name: 'code_calls', nullable: false, type: listOf(codeCallType(arrow)) },
    { name: 'simulated_user', nullable: true, type: simulatedUserType(arrow) },
  ];
}
