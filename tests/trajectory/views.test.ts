import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentResult } from '../../src/agent/result.js';
import type { AssistantMessage, Message, ToolMessage, ToolSpec } from '../../src/model/messages.js';
import { buildRecord } from '../../src/trajectory/build-record.js';
import { hermesSystemPrompt } from '../../src/trajectory/hermes-template.js';
import { pythonJson } from '../../src/trajectory/python-json.js';
import { validateRecord } from '../../src/trajectory/record.js';
import { gptValue, toolValue, toShareGpt } from '../../src/trajectory/sharegpt.js';
import { hasReasoning, toolStats } from '../../src/trajectory/statistics.js';

const TERMINAL: ToolSpec = {
  type: 'function',
  function: {
    name: 'terminal',
    description: 'Run a command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

/** The whole system turn, byte for byte: any change to the template must change this test. */
const PINNED_SYSTEM_TURN =
  'You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. ' +
  'You may call one or more functions to assist with the user query. ' +
  "Don't make assumptions about what values to plug into functions. " +
  'After calling and executing the functions, you will be provided with function results within ' +
  '<tool_response></tool_response> XML tags. Here are the available tools: <tools>[{"name": "terminal", ' +
  '"description": "Run a command.", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, ' +
  '"required": ["command"]}}]</tools> Use the following pydantic model json schema for each tool call you will make: ' +
  '{"properties": {"arguments": {"title": "Arguments", "type": "object"}, "name": {"title": "Name", "type": "string"}}, ' +
  '"required": ["arguments", "name"], "title": "FunctionCall", "type": "object"} For each function call return a json ' +
  'object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call>\n\nBe brief.';

test('the Hermes system turn is pinned byte for byte, with the run system prompt (trimmed) after it', () => {
  assert.equal(hermesSystemPrompt([TERMINAL], '  Be brief.  '), PINNED_SYSTEM_TURN);
  assert.equal(hermesSystemPrompt([TERMINAL], undefined), PINNED_SYSTEM_TURN.replace('\n\nBe brief.', ''));
  assert.equal(hermesSystemPrompt([TERMINAL], '   '), PINNED_SYSTEM_TURN.replace('\n\nBe brief.', ''));
});

test('pythonJson spells JSON as json.dumps(ensure_ascii=False) does', () => {
  assert.equal(pythonJson({ a: [1, 'é', null], b: { c: true } }), '{"a": [1, "é", null], "b": {"c": true}}');
  assert.equal(pythonJson({ skipped: undefined, nan: Number.NaN }), '{"nan": null}');
  assert.equal(pythonJson('quote " and \n'), '"quote \\" and \\n"');
});

function assistant(
  content: string | null,
  calls: [string, string, string][] = [],
  reasoning?: string,
): AssistantMessage {
  return {
    role: 'assistant',
    content,
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(calls.length === 0
      ? {}
      : {
          tool_calls: calls.map(([id, name, args]) => ({
            id,
            type: 'function' as const,
            function: { name, arguments: args },
          })),
        }),
  };
}

test('a gpt turn: think block (empty when none), content, then one tool_call block per call', () => {
  assert.equal(gptValue(assistant('Done.')), '<think>\n</think>\nDone.');
  assert.equal(gptValue(assistant('Done.', [], ' why ')), '<think>\nwhy\n</think>\nDone.');
  assert.equal(
    gptValue(
      assistant(null, [
        ['c1', 'terminal', '{"command":"ls"}'],
        ['c2', 'terminal', '{broken'],
      ]),
    ),
    '<think>\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "terminal", "arguments": "{broken"}\n</tool_call>',
  );
});

test('tool results: JSON content embedded as JSON, text as a string, names from the tool_call_id', () => {
  const results: ToolMessage[] = [
    { role: 'tool', tool_call_id: 'b', content: 'plain text' },
    { role: 'tool', tool_call_id: 'a', content: '{"exit_code": 0}' },
  ];
  const names = new Map([
    ['a', 'terminal'],
    ['b', 'read_file'],
  ]);
  assert.equal(
    toolValue(results, names),
    '<tool_response>\n{"tool_call_id": "b", "name": "read_file", "content": "plain text"}\n</tool_response>\n' +
      '<tool_response>\n{"tool_call_id": "a", "name": "terminal", "content": {"exit_code": 0}}\n</tool_response>',
  );
});

const CONVERSATION: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'list files' },
  assistant(
    null,
    [
      ['c1', 'terminal', '{"command":"ls"}'],
      ['c2', 'terminal', '{"command":"pwd"}'],
    ],
    'look first',
  ),
  { role: 'tool', tool_call_id: 'c2', content: '{"exit_code":0,"output":"/w\\n"}' },
  { role: 'tool', tool_call_id: 'c1', content: '{"exit_code":0,"output":"a\\n"}' },
  assistant('a'),
];

test('toShareGpt: roles mapped, all results of one turn in one tool turn, in the order they came', () => {
  const turns = toShareGpt(CONVERSATION, [TERMINAL]);
  assert.deepEqual(
    turns.map((turn) => turn.from),
    ['system', 'human', 'gpt', 'tool', 'gpt'],
  );
  assert.equal(turns[0]!.value, PINNED_SYSTEM_TURN);
  assert.equal(turns[1]!.value, 'list files');
  assert.equal(turns[3]!.value.split('<tool_response>').length - 1, 2);
  assert.ok(turns[3]!.value.indexOf('"c2"') < turns[3]!.value.indexOf('"c1"'));
  assert.equal(turns[4]!.value, '<think>\n</think>\na');
});

function agentResult(overrides: Partial<AgentResult> = {}): AgentResult {
  return {
    messages: CONVERSATION,
    finishReason: 'stop',
    turns: 2,
    apiCalls: 2,
    toolCalls: [
      { name: 'terminal', ok: true, ms: 3 },
      { name: 'terminal', ok: false, ms: 1 },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 2 },
    timings: { started_at: '2026-01-01T00:00:00.000Z', duration_ms: 9, model_ms: 5, tool_ms: 4 },
    ...overrides,
  } as AgentResult;
}

const RECORD_INPUT = {
  key: 'k',
  sample: 0,
  tools: [TERMINAL],
  toolsets: ['terminal'],
  model: 'm',
  source: { dataset: 'd.jsonl', row: 3, fields: { topic: 'x' } },
};

test('buildRecord: a valid record with both views, tool stats and the untouched messages', () => {
  const record = validateRecord(buildRecord({ ...RECORD_INPUT, result: agentResult() }));
  assert.equal(record.completed, true);
  assert.equal(record.partial, false);
  assert.deepEqual(record.messages, CONVERSATION);
  assert.equal(record.conversations.length, 5);
  assert.deepEqual(record.tool_stats, [{ name: 'terminal', calls: 2, ok: 1, errors: 1 }]);
  assert.equal(record.has_reasoning, true);
  assert.equal(record.reward, null);
  assert.deepEqual(record.source, RECORD_INPUT.source);
  assert.equal(record.error, null);
});

test('buildRecord: stopped early with output is partial, not completed', () => {
  const record = buildRecord({ ...RECORD_INPUT, result: agentResult({ finishReason: 'max_turns' }) });
  assert.equal(record.completed, false);
  assert.equal(record.partial, true);
  const empty = buildRecord({
    ...RECORD_INPUT,
    result: agentResult({ finishReason: 'api_error', messages: CONVERSATION.slice(0, 2) }),
  });
  assert.equal(empty.partial, false);
});

test('toolStats sorts by name; hasReasoning sees fields and non-empty inline blocks only', () => {
  assert.deepEqual(
    toolStats([
      { name: 'write_file', ok: true, ms: 1 },
      { name: 'read_file', ok: true, ms: 1 },
    ]).map((stat) => stat.name),
    ['read_file', 'write_file'],
  );
  assert.equal(hasReasoning([assistant('<think>\n</think>\nno')]), false);
  assert.equal(hasReasoning([assistant('<think>yes</think>answer')]), true);
  assert.equal(hasReasoning([assistant('x', [], 'field')]), true);
  assert.equal(hasReasoning([{ role: 'user', content: '<think>user text</think>' }]), false);
});
