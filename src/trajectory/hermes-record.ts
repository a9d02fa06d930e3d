import { contentText, type AssistantMessage, type Message, type ToolSpec } from '../model/messages.js';
import { parsePythonJson } from './python-json-value.js';
import { pythonJson } from './python-json.js';
import type { ShareGptTurn, TrajectoryRecord } from './record.js';

/**
 * hermes-agent's batch-runner record format, converted from traj's messages view. Everything here
 * is a pure function of the record, so an export is reproducible byte for byte. The "Hermes mapping" table of
 * docs/export.md says where the values come from and where traj differs on purpose.
 */
export interface HermesRecord {
  prompt_index: number;
  conversations: ShareGptTurn[];
  metadata: { batch_num: number; timestamp: string; model: string };
  completed: boolean;
  partial: boolean;
  api_calls: number;
  toolsets_used: string[];
  tool_stats: Record<string, HermesToolStat>;
  tool_error_counts: Record<string, number>;
}

export interface HermesToolStat {
  count: number;
  success: number;
  failure: number;
}

export interface HermesRecordOptions {
  /** Every tool name traj knows: tool_stats and tool_error_counts list each (zeros when unused). */
  knownTools: readonly string[];
  /** Prompts per Hermes batch: metadata.batch_num = prompt_index / batchSize, rounded down. */
  batchSize: number;
}

/** Hermes' function-calling system turn, word for word, with its `<tools>` list. */
export function hermesSystemTurn(tools: readonly ToolSpec[]): string {
  const entries = tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
    required: null,
  }));
  return (
    'You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. ' +
    'You may call one or more functions to assist with the user query. If available tools are not relevant in assisting ' +
    "with user query, just respond in natural conversational language. Don't make assumptions about what values to plug " +
    'into functions. After calling & executing the functions, you will be provided with function results within ' +
    '<tool_response> </tool_response> XML tags. Here are the available tools:\n' +
    `<tools>\n${pythonJson(entries)}\n</tools>\n` +
    'For each function call return a JSON object, with the following pydantic model json schema for each:\n' +
    "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, " +
    "'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n" +
    'Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n' +
    "Example:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>"
  );
}

/**
 * The `conversations` of a Hermes record. System messages are left out (Hermes never saves the
 * system prompt it sent); the first user message is the `human` turn; tool results take the name
 * of the call at their position in the assistant turn; arguments that are not JSON become `{}`.
 */
export function hermesConversations(messages: readonly Message[], tools: readonly ToolSpec[]): ShareGptTurn[] {
  const turns: ShareGptTurn[] = [{ from: 'system', value: hermesSystemTurn(tools) }];
  const conversation = messages.filter((message) => message.role !== 'system');
  const first = conversation[0];
  if (first?.role === 'user') turns.push({ from: 'human', value: contentText(first.content) });
  for (let index = first?.role === 'user' ? 1 : 0; index < conversation.length; index++) {
    const message = conversation[index]!;
    if (message.role === 'user') turns.push({ from: 'human', value: contentText(message.content) });
    if (message.role !== 'assistant') continue;
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      turns.push({
        from: 'gpt',
        value: pythonStrip(withThink(think(message) + scratchpadToThink(message.content ?? ''))),
      });
      continue;
    }
    turns.push({ from: 'gpt', value: pythonStrip(withThink(callTurn(message)), 'end') });
    const responses: string[] = [];
    while (conversation[index + 1]?.role === 'tool') {
      const result = conversation[++index] as Extract<Message, { role: 'tool' }>;
      const name = calls[responses.length]?.function.name ?? 'unknown';
      const body = pythonJson({ tool_call_id: result.tool_call_id, name, content: toolContent(result.content) });
      responses.push(`<tool_response>\n${body}\n</tool_response>`);
    }
    if (responses.length > 0) turns.push({ from: 'tool', value: responses.join('\n') });
  }
  return turns;
}

function think(message: AssistantMessage): string {
  return message.reasoning && pythonStrip(message.reasoning) ? `<think>\n${message.reasoning}\n</think>\n` : '';
}

function withThink(value: string): string {
  return value.includes('<think>') ? value : `<think>\n</think>\n${value}`;
}

function callTurn(message: AssistantMessage): string {
  let value = think(message);
  if (message.content && pythonStrip(message.content)) value += `${scratchpadToThink(message.content)}\n`;
  for (const call of message.tool_calls ?? []) {
    const callJson = { name: call.function.name, arguments: parsedOr(call.function.arguments, {}) };
    value += `<tool_call>\n${pythonJson(callJson)}\n</tool_call>\n`;
  }
  return value;
}

/** Tool output that starts like JSON (`{` or `[`) is embedded as JSON when it parses; else kept as text. */
function toolContent(content: string): unknown {
  return /^[{[]/.test(pythonStrip(content)) ? parsedOr(content, content) : content;
}

function parsedOr(text: string, fallback: unknown): unknown {
  try {
    JSON.parse(text);
  } catch {
    return fallback;
  }
  return parsePythonJson(text);
}

function scratchpadToThink(content: string): string {
  if (!content.includes('<REASONING_SCRATCHPAD>')) return content;
  return content.replaceAll('<REASONING_SCRATCHPAD>', '<think>').replaceAll('</REASONING_SCRATCHPAD>', '</think>');
}

/** Python's str.isspace() set, which differs from JavaScript's \s (\x1c-\x1f, \x85 in; \ufeff out). */
const PYTHON_SPACE =
  '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const LEADING = new RegExp(`^${PYTHON_SPACE}+`);
const TRAILING = new RegExp(`${PYTHON_SPACE}+$`);

function pythonStrip(text: string, side: 'both' | 'end' = 'both'): string {
  const end = text.replace(TRAILING, '');
  return side === 'end' ? end : end.replace(LEADING, '');
}

/**
 * Per tool, calls and outcomes judged as Hermes judges them from the messages: a result fails when
 * it is a JSON object with a non-null `error` (or `content.error`), or `"success": false`, or when
 * it is not JSON and is empty or starts with "error:".
 */
export function hermesToolStats(messages: readonly Message[]): Record<string, HermesToolStat> {
  const stats: Record<string, HermesToolStat> = {};
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        stats[call.function.name] ??= { count: 0, success: 0, failure: 0 };
        stats[call.function.name]!.count++;
        names.set(call.id, call.function.name);
      }
    } else if (message.role === 'tool') {
      const name = names.get(message.tool_call_id);
      if (name !== undefined) stats[name]![toolFailed(message.content) ? 'failure' : 'success']++;
    }
  }
  return stats;
}

function toolFailed(content: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return content === '' || pythonStrip(content).toLowerCase().startsWith('error:');
  }
  if (!isObject(parsed)) return false;
  const object = parsed;
  const inner = object.content;
  const innerError = isObject(inner) ? inner.error : undefined;
  const error = 'error' in object && object.error !== null;
  return error || (innerError !== undefined && innerError !== null) || object.success === false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Hermes' `datetime.now().isoformat()` spelling (no zone; microseconds only when non-zero), in UTC. */
export function pythonIsoTimestamp(date: Date): string {
  const text = date.toISOString().slice(0, -1);
  return text.endsWith('.000') ? text.slice(0, -4) : `${text}000`;
}

function padded<T>(known: readonly string[], values: Record<string, T>, zero: () => T): Record<string, T> {
  const result: Record<string, T> = {};
  for (const name of [...known].sort()) result[name] = values[name] ?? zero();
  for (const [name, value] of Object.entries(values)) if (!(name in result)) result[name] = value;
  return result;
}

/** One traj record as hermes-agent's batch runner writes one line. */
export function toHermesRecord(record: TrajectoryRecord, options: HermesRecordOptions): HermesRecord {
  const promptIndex = record.source.row ?? 0;
  const stats = hermesToolStats(record.messages);
  const finished = new Date(Date.parse(record.timing.started_at) + Math.round(record.timing.duration_ms));
  const failures = Object.fromEntries(Object.entries(stats).map(([name, stat]) => [name, stat.failure]));
  return {
    prompt_index: promptIndex,
    conversations: hermesConversations(record.messages, record.tools),
    metadata: {
      batch_num: Math.floor(promptIndex / options.batchSize),
      timestamp: pythonIsoTimestamp(finished),
      model: record.model,
    },
    completed: record.completed,
    // Hermes sets partial when it gave up after repeated invalid tool calls; traj never gives up on
    // those (each becomes a result the model can fix), so no traj rollout is partial in this sense.
    partial: false,
    api_calls: record.api_calls,
    toolsets_used: record.toolsets,
    tool_stats: padded(options.knownTools, stats, () => ({ count: 0, success: 0, failure: 0 })),
    tool_error_counts: padded(options.knownTools, failures, () => 0),
  };
}

/** The JSON line, as Python's `json.dumps(entry, ensure_ascii=False)` writes it. */
export function hermesLine(record: HermesRecord): string {
  return pythonJson(record);
}
