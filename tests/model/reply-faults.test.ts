import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ModelError } from '../../src/errors.js';
import { createModelClient } from '../../src/model/client.js';
import { errorTextMessage } from '../../src/model/error-body.js';
import { readServerSentEvents } from '../../src/model/reply-body.js';
import { StreamAssembler } from '../../src/model/stream-assembler.js';
import type { ModelDelta } from '../../src/model/types.js';
import type { ScriptedResponse } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

const GOOD = { content: 'fine' } satisfies ScriptedResponse;
const raw = (body: string, content_type = 'application/json'): ScriptedResponse => ({
  fault: 'raw',
  body,
  content_type,
});

for (const stream of [false, true]) {
  const how = stream ? 'streamed' : 'not streamed';
  const request = stream ? { messages: HELLO, onDelta: () => {} } : { messages: HELLO };

  test(`a 200 with a malformed JSON body is retried like a transport fault (${how})`, async () => {
    const broken = stream
      ? raw('data: {"choices": [{"delta": {"content": "tru\n\n', 'text/event-stream')
      : raw('{"choices": [{"message": {"content": "tru');
    await withServer([broken, GOOD], async (server) => {
      const response = await createModelClient(endpointFor(server), FAST).complete(request);
      assert.equal(response.message.content, 'fine');
      assert.equal(response.attempts, 2);
      assert.equal(server.requestCount(), 2);
    });
  });

  test(`a runaway reply past max_reply_bytes is a reply_too_large ModelError, not retried (${how})`, async () => {
    const text = 'x'.repeat(64 * 1024);
    const body = stream
      ? Array.from(
          { length: 40 },
          () => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`,
        ).join('')
      : JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: text.repeat(40) }, finish_reason: 'stop' }],
        });
    await withServer([raw(body, stream ? 'text/event-stream' : 'application/json'), GOOD], async (server) => {
      const client = createModelClient(endpointFor(server, { max_reply_bytes: 1024 * 1024 }), FAST);
      await assert.rejects(client.complete(request), (error: unknown) => {
        assert.ok(error instanceof ModelError);
        assert.equal(error.code, 'reply_too_large');
        assert.equal(error.retryable, false);
        assert.match(error.message, /max_reply_bytes \(1048576 bytes\)/);
        return true;
      });
      assert.equal(server.requestCount(), 1, 'not retried');
    });
  });
}

test('a reply read whole keeps multi-byte text intact (the bytes decode once, not per chunk)', async () => {
  const content = `${'é中🙂'.repeat(30_000)} end`;
  await withServer([{ content }], async (server) => {
    const response = await createModelClient(endpointFor(server), FAST).complete({ messages: HELLO });
    assert.equal(response.message.content, content);
  });
});

test('the same reply under the default cap is kept whole', async () => {
  const content = 'y'.repeat(2 * 1024 * 1024);
  await withServer([{ content }], async (server) => {
    const response = await createModelClient(endpointFor(server), FAST).complete({ messages: HELLO });
    assert.equal(response.message.content?.length, content.length);
  });
});

test('message: null in a choice is a classified ModelError naming the problem, not an internal error', async () => {
  const nullMessage = raw(JSON.stringify({ id: 'x', choices: [{ index: 0, message: null, finish_reason: 'stop' }] }));
  await withServer([nullMessage, nullMessage], async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 1 }), FAST);
    await assert.rejects(client.complete({ messages: HELLO }), (error: unknown) => {
      assert.ok(error instanceof ModelError, String(error));
      assert.match(error.message, /no message \(message: null\)/);
      assert.equal(error.retryable, true, 'a server glitch: the rollout may be retried');
      return true;
    });
    assert.equal(server.requestCount(), 2, 'retried once like other bad responses');
  });
});

test('a body that is an error object sent with 200 says so, with the server words', async () => {
  await withServer([raw(JSON.stringify({ object: 'error', message: 'engine overloaded' }))], async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 0 }), FAST);
    await assert.rejects(client.complete({ messages: HELLO }), /the response is an error: engine overloaded/);
  });
});

test('error bodies of every shape give the server its own words', () => {
  const cases: Array<[string, string]> = [
    [
      '{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}',
      'Incorrect API key provided',
    ],
    [
      '{"object": "error", "message": "maximum context length is 32768", "code": 400}',
      'maximum context length is 32768',
    ],
    [
      '{"error": {"message": "Provider returned error", "metadata": {"raw": "upstream says no", "provider_name": "X"}}}',
      'Provider returned error: upstream says no (X)',
    ],
    ['{"error": "model \'llama9\' not found"}', "model 'llama9' not found"],
    ['{"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}', 'field required'],
    ['Bad Gateway', 'Bad Gateway'],
    [
      '<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body><p>try later</p></body></html>',
      'Service Unavailable: try later',
    ],
  ];
  for (const [body, message] of cases) assert.equal(errorTextMessage(body), message, body);
  assert.equal(errorTextMessage('   '), undefined);
  assert.ok(errorTextMessage('z'.repeat(10_000))!.length < 2_100, 'a huge body is clipped');
});

test('streamed tool calls: index reused with new ids, id-only pieces, several calls in one chunk, and continuations', () => {
  const deltas: ModelDelta[] = [];
  const assembler = new StreamAssembler((delta) => deltas.push(delta));
  const piece = (calls: unknown[]) => assembler.add({ choices: [{ delta: { tool_calls: calls as never } }] });
  // Some servers number every call 0; the id tells them apart.
  piece([{ index: 0, id: 'a', function: { name: 'f', arguments: '{"n":' } }]);
  piece([{ index: 0, function: { arguments: '1}' } }]);
  piece([{ index: 0, id: 'b', function: { name: 'f', arguments: '{"n":2}' } }]);
  // id only, then a continuation with neither.
  piece([{ id: 'c', function: { name: 'g', arguments: '{"s":' } }]);
  piece([{ function: { arguments: '"x"}' } }]);
  // Two calls in one chunk.
  piece([
    { index: 3, id: 'd', function: { name: 'h', arguments: '{}' } },
    { index: 4, id: 'e', function: { name: 'h', arguments: '[]' } },
  ]);
  const calls = assembler
    .result()
    .message.tool_calls!.map((call) => [call.id, call.function?.name, call.function?.arguments]);
  assert.deepEqual(calls, [
    ['a', 'f', '{"n":1}'],
    ['b', 'f', '{"n":2}'],
    ['c', 'g', '{"s":"x"}'],
    ['d', 'h', '{}'],
    ['e', 'h', '[]'],
  ]);
  assert.deepEqual([...new Set(deltas.map((delta) => (delta as { index: number }).index))], [0, 1, 2, 3, 4]);
});

test('reasoning_echo and max_reply_bytes are validated like every endpoint field', () => {
  assert.throws(
    () =>
      createModelClient({
        base_url: 'http://127.0.0.1:1/v1',
        model: 'm',
        reasoning_echo: 'sometimes' as never,
        max_reply_bytes: 0,
      }),
    (error: unknown) =>
      error instanceof ConfigError && /reasoning_echo/.test(error.message) && /max_reply_bytes/.test(error.message),
  );
});

test('server-sent events: CRLF lines, comments, event names, multi-line data and a last event without a blank line', async () => {
  const body =
    ': OPENROUTER PROCESSING\r\n\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: two\n\ndata: [DONE]';
  const events = [];
  for await (const event of readServerSentEvents(new Response(body), 1024)) events.push(event);
  assert.deepEqual(events, [
    { event: 'message', data: '{"a":\n1}' },
    { event: undefined, data: 'two' },
    { event: undefined, data: '[DONE]' },
  ]);
});

test('an error chunk inside a 200 stream fails the call with its message', async () => {
  const stream = raw(
    'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n' +
      'data: {"error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n',
    'text/event-stream',
  );
  await withServer([stream], async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 0 }), FAST);
    await assert.rejects(
      client.complete({ messages: HELLO, onDelta: () => {} }),
      /the stream carried an error: Provider disconnected/,
    );
  });
});
