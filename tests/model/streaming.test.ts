import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointInput } from '../../src/config/endpoint.js';
import { createModelClient } from '../../src/model/client.js';
import type { ModelDelta, ModelResponse } from '../../src/model/types.js';
import type { ScriptedReply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

const NATIVE_REPLY: ScriptedReply = {
  reasoning_content: 'The user wants two things; run both commands.',
  content: '<think>and check the disk</think>Running two commands — ünïcödé 🙂 included.',
  tool_calls: [
    { name: 'terminal', arguments: { command: 'ls -la /tmp', timeout: 30 } },
    { name: 'terminal', arguments: '{"command": "df -h"' },
  ],
  usage: { prompt_tokens: 321, completion_tokens: 45, reasoning_tokens: 12 },
};

const HERMES_REPLY: ScriptedReply = {
  content:
    '<think>plan</think>Let me check.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>\n<tool_call>{"name": broken}</tool_call>',
  reasoning_details: [{ type: 'reasoning.text', text: 'detail text that streams in pieces' }],
};

/** Call the same one-reply script twice, on fresh servers, once plain and once streamed. */
async function bothWays(reply: ScriptedReply, overrides: Partial<EndpointInput> = {}) {
  const plain = await withServer([reply], async (server) => {
    const response = await createModelClient(endpointFor(server, overrides), FAST).complete({ messages: HELLO });
    return { response, request: server.requests[0]! };
  });
  const deltas: ModelDelta[] = [];
  const streamed = await withServer([reply], async (server) => {
    const response = await createModelClient(endpointFor(server, overrides), FAST).complete({
      messages: HELLO,
      onDelta: (delta) => deltas.push(delta),
    });
    return { response, request: server.requests[0]! };
  });
  return { plain, streamed, deltas };
}

function comparable(response: ModelResponse) {
  const { durationMs: _durationMs, ...rest } = response;
  return rest;
}

test('streamed and plain calls of one script give the same response (native tool calls, reasoning, usage)', async () => {
  const { plain, streamed, deltas } = await bothWays(NATIVE_REPLY);
  assert.deepEqual(comparable(streamed.response), comparable(plain.response));
  assert.equal(plain.response.message.content, 'Running two commands — ünïcödé 🙂 included.');
  assert.equal(plain.response.message.reasoning, 'The user wants two things; run both commands.\n\nand check the disk');
  assert.deepEqual(plain.response.usage, {
    prompt_tokens: 321,
    completion_tokens: 45,
    reasoning_tokens: 12,
    cached_tokens: 0,
    cost: null,
    cost_source: 'unknown',
    unpriced_models: [plain.request.model],
  });
  assert.equal(plain.response.toolCalls[1]!.function.arguments, '{"command": "df -h"');

  assert.equal(plain.request.stream, undefined);
  assert.equal(streamed.request.stream, true);
  assert.deepEqual(streamed.request.stream_options, { include_usage: true });

  const content = deltas.filter((delta) => delta.type === 'content');
  assert.ok(content.length >= 2, 'content arrived in several deltas');
  assert.equal(content.map((delta) => delta.text).join(''), NATIVE_REPLY.content);
  const reasoning = deltas
    .filter((delta) => delta.type === 'reasoning')
    .map((delta) => delta.text)
    .join('');
  assert.equal(reasoning, NATIVE_REPLY.reasoning_content);
  const toolDeltas = deltas.filter((delta) => delta.type === 'tool_call');
  assert.ok(toolDeltas.length >= 4, 'each call streamed in several pieces');
  for (const index of [0, 1]) {
    const pieces = toolDeltas.filter((delta) => delta.index === index);
    assert.equal(pieces[0]!.name, 'terminal');
    assert.equal(
      pieces.map((delta) => delta.argumentsDelta ?? '').join(''),
      plain.response.toolCalls[index]!.function.arguments,
    );
  }
});

test('streamed and plain calls give the same response for hermes content and reasoning_details', async () => {
  const { plain, streamed } = await bothWays(HERMES_REPLY, { tool_call_format: 'hermes' });
  assert.deepEqual(comparable(streamed.response), comparable(plain.response));
  assert.equal(plain.response.message.content, 'Let me check.');
  assert.equal(plain.response.message.reasoning, 'detail text that streams in pieces\n\nplan');
  assert.equal(plain.response.toolCalls.length, 2);
  assert.ok(plain.response.toolCalls[1]!.parseError);
});

test('streamed and plain calls agree on a truncated answer and on an empty one', async () => {
  for (const reply of [{ content: 'The answer is', finish_reason: 'length' as const }, { content: '' }]) {
    const { plain, streamed } = await bothWays(reply);
    assert.deepEqual(comparable(streamed.response), comparable(plain.response));
  }
  const truncated = await bothWays({ content: 'The answer is', finish_reason: 'length' });
  assert.equal(truncated.plain.response.finishReason, 'length');
  const empty = await bothWays({ content: '' });
  assert.equal(empty.plain.response.message.content, null);
  assert.equal(empty.plain.response.finishReason, 'stop');
});
