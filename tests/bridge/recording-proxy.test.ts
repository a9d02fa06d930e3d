import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRecordingProxy, type RecordingProxy } from '../../src/bridge/index.js';
import { createModelClient } from '../../src/model/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';

/** The proxy over real HTTP against the scripted endpoint: each API the agents speak, streamed and not. */
let server: ScriptedServer;
const proxies: RecordingProxy[] = [];

before(async () => {
  server = await startScriptedServer((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? { content: 'all done', usage: { prompt_tokens: 50, completion_tokens: 5 } }
      : {
          tool_calls: [{ name: 'shell', arguments: { command: 'ls' }, id: 'call_1' }],
          usage: { prompt_tokens: 40, completion_tokens: 10 },
        },
  );
});
after(async () => {
  for (const proxy of proxies) await proxy.close();
  await server.close();
});

async function proxy(limits = {}): Promise<RecordingProxy> {
  const client = createModelClient({
    base_url: server.url,
    model: 'scripted',
    api_key_env: 'TRAJ_TEST_NO_KEY',
    max_retries: 0,
  });
  const started = await startRecordingProxy({ client, host: '127.0.0.1', token: 'secret-path', limits });
  proxies.push(started);
  return started;
}

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const SHELL_TOOL = {
  name: 'shell',
  description: 'run',
  input_schema: { type: 'object', properties: { command: { type: 'string' } } },
};

describe('recording proxy', () => {
  it('Anthropic Messages, streamed: tool_use blocks out, tool_result blocks back in as tool messages', async () => {
    const started = await proxy();
    const first = await post(`${started.url}/v1/messages`, {
      model: 'x',
      max_tokens: 100,
      stream: true,
      system: 'be brief',
      tools: [SHELL_TOOL],
      messages: [{ role: 'user', content: 'list files' }],
    });
    assert.equal(first.status, 200);
    assert.match(first.text, /event: content_block_start\ndata: .*"type":"tool_use","id":"call_1","name":"shell"/);
    assert.match(first.text, /"partial_json":"{\\"command\\":\\"ls\\"}"/);
    assert.match(first.text, /"stop_reason":"tool_use"/);
    const second = await post(`${started.url}/v1/messages`, {
      model: 'x',
      max_tokens: 100,
      system: 'be brief',
      tools: [SHELL_TOOL],
      messages: [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'shell', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt' }] },
      ],
    });
    assert.deepEqual(JSON.parse(second.text).content, [{ type: 'text', text: 'all done' }]);
    assert.deepEqual(server.requests.at(-1)!.messages, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
    ]);
    assert.equal(started.exchanges.length, 2);
    assert.equal(started.usage.prompt_tokens, 90);
  });

  it('Anthropic Messages as Claude Code 2.1 sends them: system blocks, a system message between turns, ?beta=true', async () => {
    const started = await proxy();
    const system = [
      { type: 'text', text: 'header' },
      { type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } },
    ];
    const answer = await post(`${started.url}/v1/messages?beta=true`, {
      model: 'x',
      max_tokens: 100,
      system,
      tools: [SHELL_TOOL],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list files' }] },
        { role: 'system', content: [{ type: 'text', text: '# Environment\ncwd /app' }] },
      ],
    });
    assert.equal(answer.status, 200, answer.text);
    const sent = server.requests.at(-1)!.messages;
    assert.equal(sent[0]!.role, 'system');
    assert.match(String(sent[0]!.content), /header[\s\S]*be brief/);
    assert.deepEqual(sent.slice(1), [
      { role: 'user', content: 'list files' },
      { role: 'system', content: '# Environment\ncwd /app' },
    ]);
    const refused = await post(`${started.url}/v1/messages`, {
      model: 'x',
      max_tokens: 100,
      messages: [{ role: 'developer', content: 'x' }],
    });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /messages\[0\]\.role: expected user, assistant or system/);
  });

  it('Responses API, not streamed: a custom tool call comes back as custom_tool_call with its free text', async () => {
    const started = await proxy();
    const answer = await post(`${started.url}/v1/responses`, {
      model: 'x',
      instructions: 'sys',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }],
      tools: [{ type: 'custom', name: 'shell', description: 'free text' }, { type: 'web_search' }],
    });
    const body = JSON.parse(answer.text);
    assert.equal(body.output[0].type, 'custom_tool_call');
    assert.equal(body.output[0].call_id, 'call_1');
    assert.equal(body.usage.input_tokens, 40);
    assert.deepEqual(
      server.requests.at(-1)!.tools!.map((tool) => tool.function.name),
      ['shell'],
    );
  });

  it('a token limit refuses the next call with an error the agent can read, and says why it stopped', async () => {
    const started = await proxy({ tokens: 30 });
    const body = {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    };
    const first = await post(`${started.url}/v1/chat/completions`, body);
    assert.match(first.text, /"tool_calls":\[{"index":0,"id":"call_1"/);
    assert.match(first.text, /data: \[DONE\]/);
    const before = server.requestCount();
    const refused = await post(`${started.url}/v1/chat/completions`, body);
    assert.equal(refused.status, 400);
    assert.match(JSON.parse(refused.text).error.message, /token limit \(30 tokens\)/);
    assert.equal(server.requestCount(), before, 'a refused call never reaches the endpoint');
    assert.equal(started.stop?.reason, 'max_tokens');
  });

  it('answers nothing without the rollout token in the path', async () => {
    const started = await proxy();
    const wrong = started.url.replace('secret-path', 'guess');
    const answer = await post(`${wrong}/v1/chat/completions`, { messages: [] });
    assert.equal(answer.status, 404);
    assert.equal(started.exchanges.length, 0);
  });
});
