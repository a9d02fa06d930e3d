import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModelClient } from '../../src/model/client.js';
import { INVALID_TOOL_CALL_NAME, parseHermesToolCalls } from '../../src/model/hermes.js';
import { reply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

const VALID = [
  'I will look first.',
  '<tool_call>\n{"name": "terminal", "arguments": {"command": "ls -la"}}\n</tool_call>',
  '<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>',
].join('\n');

const ONE_MALFORMED = [
  '<tool_call>{"name": "terminal", "arguments": {"command": "pwd"}}</tool_call>',
  '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"</tool_call>',
  '<tool_call>{"arguments": {"x": 1}}</tool_call>',
  '<tool_call>{"name": "write_file", "arguments": {"path": "b.txt", "content": "hi"}}</tool_call>',
].join('\n');

const UNCLOSED_LAST =
  '<think>two steps</think>\n<tool_call>{"name": "terminal", "arguments": {"command": "date"}}</tool_call>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "uptime"}}';

test('hermes over the wire: valid blocks become tool calls, text outside stays content', async () => {
  await withServer([reply(VALID)], async (server) => {
    const client = createModelClient(endpointFor(server, { tool_call_format: 'hermes' }), FAST);
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'I will look first.');
    assert.deepEqual(response.toolCalls, [
      { id: 'hermes_0', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls -la"}' } },
      { id: 'hermes_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } },
    ]);
    assert.deepEqual(response.message.tool_calls, response.toolCalls);
    assert.equal(response.finishReason, 'tool_calls', 'calls found in content make it a tool-call turn');
  });
});

test('hermes: one malformed block among valid ones is an error for that call only', async () => {
  await withServer([reply(ONE_MALFORMED)], async (server) => {
    const client = createModelClient(endpointFor(server, { tool_call_format: 'hermes' }), FAST);
    const response = await client.complete({ messages: HELLO });
    const calls = response.toolCalls;
    assert.equal(calls.length, 4);
    assert.deepEqual(
      calls.map((call) => call.id),
      ['hermes_0', 'hermes_1', 'hermes_2', 'hermes_3'],
    );
    assert.equal(calls[0]!.parseError, undefined);
    assert.equal(calls[0]!.function.arguments, '{"command":"pwd"}');
    assert.match(calls[1]!.parseError!, /block 2 is not valid JSON/);
    assert.equal(calls[1]!.function.name, 'read_file', 'the name is recovered from the broken block');
    assert.equal(
      calls[1]!.function.arguments,
      '{"name": "read_file", "arguments": {"path": "a.txt"',
      'the raw block is kept',
    );
    assert.match(calls[2]!.parseError!, /block 3 has no "name"/);
    assert.equal(calls[2]!.function.name, INVALID_TOOL_CALL_NAME);
    assert.equal(calls[3]!.parseError, undefined);
    assert.equal(calls[3]!.function.name, 'write_file');
    assert.equal(response.message.content, null);
    for (const call of response.message.tool_calls!)
      assert.equal('parseError' in call, false, 'parse errors never go back to the model');
  });
});

test('hermes: an unclosed last block is still parsed (streamed too), reasoning comes out first', async () => {
  for (const stream of [false, true]) {
    await withServer([reply(UNCLOSED_LAST)], async (server) => {
      const client = createModelClient(endpointFor(server, { tool_call_format: 'hermes' }), FAST);
      const response = await client.complete({ messages: HELLO, ...(stream ? { onDelta: () => {} } : {}) });
      assert.equal(response.message.reasoning, 'two steps');
      assert.equal(response.message.content, null);
      assert.deepEqual(
        response.toolCalls.map((call) => [call.function.name, call.function.arguments, call.parseError]),
        [
          ['terminal', '{"command":"date"}', undefined],
          ['terminal', '{"command":"uptime"}', undefined],
        ],
      );
    });
  }
});

test('native format leaves <tool_call> text alone and passes invalid JSON arguments through', async () => {
  const raw = '{"command": "ls", ';
  await withServer(
    [{ content: '<tool_call>{"name": "x"}</tool_call>', tool_calls: [{ name: 'terminal', arguments: raw }] }],
    async (server) => {
      const client = createModelClient(endpointFor(server), FAST);
      const response = await client.complete({ messages: HELLO });
      assert.equal(response.message.content, '<tool_call>{"name": "x"}</tool_call>');
      assert.equal(response.toolCalls.length, 1);
      assert.equal(response.toolCalls[0]!.function.arguments, raw);
      assert.equal(response.toolCalls[0]!.parseError, undefined, 'the registry, not the client, reports bad arguments');
    },
  );
});

test('parseHermesToolCalls: arguments given as a string pass through; missing arguments become {}', () => {
  const parsed = parseHermesToolCalls(
    '<tool_call>{"name": "a", "arguments": "{\\"k\\": 1}"}</tool_call><tool_call>{"name": "b"}</tool_call>',
  );
  assert.deepEqual(
    parsed.toolCalls.map((call) => call.function.arguments),
    ['{"k": 1}', '{}'],
  );
  assert.equal(parsed.content, null);
  const untouched = parseHermesToolCalls('no calls here');
  assert.deepEqual(untouched, { content: 'no calls here', toolCalls: [] });
});

test('parseHermesToolCalls: an unclosed block followed by another block ends where the next begins', () => {
  const parsed = parseHermesToolCalls(
    '<tool_call>{"name": "a", "arguments": {}}\n<tool_call>{"name": "b", "arguments": {}}</tool_call>',
  );
  assert.deepEqual(
    parsed.toolCalls.map((call) => [call.function.name, call.parseError]),
    [
      ['a', undefined],
      ['b', undefined],
    ],
  );
});
