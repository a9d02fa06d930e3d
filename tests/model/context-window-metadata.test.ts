import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  contextLengthFromModels,
  DEFAULT_CONTEXT_LENGTH,
  resolveContextLength,
  withCacheMarks,
} from '../../src/model/index.js';
import { startScriptedServer } from '../../src/testing/index.js';
import { EndpointSchema } from '../../src/config/endpoint.js';

test('the window from /v1/models: vLLM, OpenRouter, llama.cpp and the fallbacks', () => {
  assert.equal(contextLengthFromModels({ data: [{ id: 'm', max_model_len: 32768 }] }, 'm'), 32768);
  assert.equal(
    contextLengthFromModels(
      { data: [{ id: 'anthropic/claude-sonnet-4', context_length: 200000, top_provider: { context_length: 200000 } }] },
      'anthropic/claude-sonnet-4',
    ),
    200000,
  );
  assert.equal(contextLengthFromModels({ data: [{ id: 'x', top_provider: { context_length: 65536 } }] }, 'x'), 65536);
  assert.equal(contextLengthFromModels({ data: [{ id: 'gguf', meta: { n_ctx_train: 131072 } }] }, 'gguf'), 131072);
  assert.equal(contextLengthFromModels({ data: [{ id: 'other', max_model_len: 1 }] }, 'm'), undefined, 'another model');
  assert.equal(contextLengthFromModels({ object: 'list' }, 'm'), undefined);
});

test('resolveContextLength: config first, then the server, then the stated default', async (t) => {
  const server = await startScriptedServer([], { contextLength: 4096, model: 'small' });
  t.after(() => server.close());
  const endpoint = (fields: Record<string, unknown>) =>
    EndpointSchema.parse({ base_url: server.url, api_key_env: 'NO_KEY', ...fields });
  assert.deepEqual(await resolveContextLength(endpoint({ model: 'small', context_length: 1000 })), {
    tokens: 1000,
    source: 'config',
  });
  assert.deepEqual(await resolveContextLength(endpoint({ model: 'small' })), { tokens: 4096, source: 'server' });
  assert.deepEqual(await resolveContextLength(endpoint({ model: 'unlisted' })), {
    tokens: DEFAULT_CONTEXT_LENGTH,
    source: 'default',
  });
  assert.deepEqual(
    await resolveContextLength(EndpointSchema.parse({ base_url: 'http://127.0.0.1:9/v1', model: 'down' })),
    { tokens: DEFAULT_CONTEXT_LENGTH, source: 'default' },
    'a server that does not answer',
  );
});

test('cache_control marks: the system prompt and the last three messages, for Anthropic models or when on', () => {
  const messages = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'u1' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'a', content: 'r1' },
    { role: 'assistant', content: 'a2' },
    { role: 'user', content: 'u2' },
  ];
  const marked = withCacheMarks({ model: 'anthropic/claude-sonnet-4' }, messages);
  const marks = marked.map((message) => Array.isArray(message.content));
  assert.deepEqual(marks, [true, false, false, true, true, true]);
  assert.deepEqual(marked[0]!.content, [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);
  assert.equal(messages[0]!.content, 'sys', 'the input is not changed');
  assert.equal(withCacheMarks({ model: 'qwen3-32b' }, messages), messages, 'auto: other models untouched');
  assert.equal(withCacheMarks({ model: 'claude-x', prompt_caching: 'off' }, messages), messages);
  assert.ok(Array.isArray(withCacheMarks({ model: 'qwen3-32b', prompt_caching: 'on' }, messages)[0]!.content));
});

test('prompt_caching on: the marks reach the server on the wire', async (t) => {
  const server = await startScriptedServer([{ content: 'ok' }]);
  t.after(() => server.close());
  const { createModelClient } = await import('../../src/model/index.js');
  const model = createModelClient({
    base_url: server.url,
    model: 'scripted',
    api_key_env: 'NO_KEY',
    prompt_caching: 'on',
  });
  await model.complete({
    messages: [
      { role: 'system', content: 'stable prefix' },
      { role: 'user', content: 'hi' },
    ],
  });
  assert.deepEqual(server.requests[0]!.messages, [
    { role: 'system', content: [{ type: 'text', text: 'stable prefix', cache_control: { type: 'ephemeral' } }] },
    { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
  ]);
});
