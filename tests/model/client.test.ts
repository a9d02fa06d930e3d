import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.js';
import { isLocalEndpoint } from '../../src/model/api-key.js';
import { createModelClient } from '../../src/model/client.js';
import type { Message } from '../../src/model/messages.js';
import { callTool, reply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

test('the request carries sampling params and extra_body; traj-only fields stay local', async () => {
  const messages: Message[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'list files' },
    {
      role: 'assistant',
      content: null,
      reasoning: 'private chain of thought',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', name: 'terminal', content: '{"exit_code":0,"output":"a.txt"}' },
  ];
  const tools = [
    { type: 'function' as const, function: { name: 'terminal', description: 'run', parameters: { type: 'object' } } },
  ];
  await withServer([reply('a.txt is there')], async (server) => {
    const endpoint = endpointFor(server, {
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 256,
      seed: 7,
      extra_body: { top_k: 20, chat_template_kwargs: { enable_thinking: true } },
    });
    await createModelClient(endpoint, FAST).complete({ messages, tools });
    const body = server.requests[0]!;
    assert.equal(body.model, 'scripted-test-model');
    assert.equal(body.temperature, 0.3);
    assert.equal(body.top_p, 0.9);
    assert.equal(body.max_tokens, 256);
    assert.equal(body.seed, 7);
    assert.equal(body.top_k, 20);
    assert.deepEqual(body.chat_template_kwargs, { enable_thinking: true });
    assert.deepEqual(body.tools, tools);
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: messages[2]!.role === 'assistant' ? messages[2]!.tool_calls : [],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"exit_code":0,"output":"a.txt"}' },
    ]);
  });
});

test('usage per call: prompt, completion and reasoning tokens', async () => {
  const script = [
    reply('counted', { usage: { prompt_tokens: 1200, completion_tokens: 80, reasoning_tokens: 50 } }),
    callTool('terminal', { command: 'ls' }, { usage: { prompt_tokens: 10, completion_tokens: 3 } }),
  ];
  await withServer(script, async (server) => {
    const client = createModelClient(endpointFor(server), FAST);
    const first = await client.complete({ messages: HELLO });
    assert.deepEqual(first.usage, {
      prompt_tokens: 1200,
      completion_tokens: 80,
      reasoning_tokens: 50,
      cached_tokens: 0,
      cost: null,
      cost_source: 'unknown',
      unpriced_models: ['scripted-test-model'],
    });
    const second = await client.complete({ messages: HELLO });
    assert.deepEqual(second.usage, {
      prompt_tokens: 10,
      completion_tokens: 3,
      reasoning_tokens: 0,
      cached_tokens: 0,
      cost: null,
      cost_source: 'unknown',
      unpriced_models: ['scripted-test-model'],
    });
    assert.equal(second.finishReason, 'tool_calls');
    assert.deepEqual(second.toolCalls, [
      { id: 'call_1_0', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } },
    ]);
    assert.ok(first.durationMs >= 0);
  });
});

test('a remote endpoint without its API key variable is a ConfigError naming the variable', () => {
  assert.throws(
    () =>
      createModelClient(
        { base_url: 'https://api.example.com/v1', model: 'm', api_key_env: 'TRAJ_TEST_MISSING_KEY' },
        { env: {} },
      ),
    (error: unknown) =>
      error instanceof ConfigError && error.code === 'api_key_missing' && /\$TRAJ_TEST_MISSING_KEY/.test(error.message),
  );
  const client = createModelClient(
    { base_url: 'https://api.example.com/v1', model: 'm', api_key_env: 'TRAJ_TEST_KEY' },
    { env: { TRAJ_TEST_KEY: 'sk-test' } },
  );
  assert.equal(client.baseURL, 'https://api.example.com/v1');
  assert.equal(client.model, 'm');
});

test('an invalid endpoint is a ConfigError naming the field', () => {
  assert.throws(
    () => createModelClient({ base_url: 'not a url', model: '' }),
    (error: unknown) => error instanceof ConfigError && /base_url/.test(error.message) && /model/.test(error.message),
  );
});

test('local and private hosts count as local (no key needed); public ones do not', () => {
  for (const url of [
    'http://127.0.0.1:8000/v1',
    'http://localhost:11434/v1',
    'http://[::1]:8000/v1',
    'http://10.1.2.3/v1',
    'http://192.168.0.5:8000/v1',
    'http://172.20.0.2/v1',
    'http://vllm:8000/v1',
    'http://gpu-box.local/v1',
  ]) {
    assert.equal(isLocalEndpoint(url), true, url);
  }
  for (const url of [
    'https://api.openai.com/v1',
    'https://openrouter.ai/api/v1',
    'http://172.32.0.1/v1',
    'http://[2001:db8::1]/v1',
  ]) {
    assert.equal(isLocalEndpoint(url), false, url);
  }
});
