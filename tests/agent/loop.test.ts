import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { GRACE_PROMPT, runAgent, type AgentEvent } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/index.js';
import type { Message } from '../../src/model/messages.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { defineTool, type Tool } from '../../src/tools/tool.js';
import {
  callTool,
  callTools,
  conversationScript,
  emptyReply,
  reply,
  startScriptedServer,
  truncatedReply,
  type Script,
} from '../../src/testing/index.js';

async function setup(
  t: { after(fn: () => unknown): void },
  script: Script,
  extraTools: Tool[] = [],
  terminal = { persistent: true },
) {
  const server = await startScriptedServer(script);
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 0 });
  const tools = [
    ...(await loadToolRegistry({ terminal })).select(['terminal', 'file'], { env: process.env }),
    ...extraTools,
  ];
  const messages: Message[] = [
    { role: 'system', content: 'You are a test agent.' },
    { role: 'user', content: 'Create hello.txt, read it back, then answer.' },
  ];
  return { server, sandbox, model, tools, messages };
}

test('a 3-turn tool episode yields exactly the expected messages', async (t) => {
  const script = conversationScript([
    callTool(
      'write_file',
      { path: 'hello.txt', content: 'hi there\n' },
      { id: 'call_w', reasoning_content: 'I should write the file first.' },
    ),
    callTool('terminal', { command: 'cat hello.txt' }, { id: 'call_t' }),
    reply('The file says: hi there'),
  ]);
  const { sandbox, model, tools, messages, server } = await setup(t, script);
  const events: AgentEvent['type'][] = [];
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 5,
    onEvent: (event) => events.push(event.type),
  });
  assert.equal(result.finishReason, 'stop');
  assert.equal(result.turns, 3);
  assert.equal(result.apiCalls, 3);
  assert.equal(server.requests.length, 3);
  assert.deepEqual(result.messages, [
    ...messages,
    {
      role: 'assistant',
      content: null,
      reasoning: 'I should write the file first.',
      tool_calls: [
        {
          id: 'call_w',
          type: 'function',
          function: { name: 'write_file', arguments: '{"path":"hello.txt","content":"hi there\\n"}' },
        },
      ],
      // reasoning_echo auto: the reasoning of a tool-calling turn goes back as it came.
      echo: { reasoning_content: 'I should write the file first.' },
    },
    { role: 'tool', tool_call_id: 'call_w', name: 'write_file', content: result.messages[3]!.content },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_t', type: 'function', function: { name: 'terminal', arguments: '{"command":"cat hello.txt"}' } },
      ],
    },
    {
      role: 'tool',
      tool_call_id: 'call_t',
      name: 'terminal',
      content: JSON.stringify({ exit_code: 0, output: 'hi there\n' }),
    },
    { role: 'assistant', content: 'The file says: hi there' },
  ]);
  assert.match(result.messages[3]!.content as string, /9/);
  assert.deepEqual(
    result.toolCalls.map((call) => [call.name, call.ok]),
    [
      ['write_file', true],
      ['terminal', true],
    ],
  );
  assert.equal((await sandbox.readFile('hello.txt')).toString(), 'hi there\n');
  assert.deepEqual(events, [
    'model_start',
    'model_end',
    'tool_start',
    'tool_end',
    'turn_end',
    'model_start',
    'model_end',
    'tool_start',
    'tool_end',
    'turn_end',
    'model_start',
    'model_end',
  ]);
  assert.deepEqual(
    server.requests[2]!.messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant', 'tool'],
  );
  assert.equal(server.requests[2]!.messages[2]!.reasoning_content, 'I should write the file first.');
  assert.equal('reasoning' in server.requests[2]!.messages[2]!, false, 'traj-local fields stay local');
});

test('unknown tool, bad JSON, schema violation and a throwing tool become error results and the loop goes on', async (t) => {
  const explode = defineTool({
    name: 'explode',
    toolset: 'test',
    description: 'always throws',
    parameters: z.object({}),
    run: () => {
      throw new Error('kaboom');
    },
  });
  const script = conversationScript([
    callTools([
      { name: 'browse_web', arguments: { url: 'x' }, id: 'a' },
      { name: 'terminal', arguments: '{"command": "ls", ', id: 'b' },
      { name: 'read_file', arguments: { path: 42 }, id: 'c' },
      { name: 'explode', arguments: {}, id: 'd' },
    ]),
    reply('done despite errors'),
  ]);
  const { sandbox, model, tools, messages } = await setup(t, script, [explode]);
  const result = await runAgent({ model, tools, messages, sandbox, maxTurns: 5 });
  assert.equal(result.finishReason, 'stop');
  const results = result.messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content as string) as { error: string; hint?: string });
  assert.match(results[0]!.error, /unknown tool 'browse_web'/);
  assert.match(results[0]!.hint!, /terminal, process, read_file, write_file, patch, search_files/);
  assert.match(results[1]!.error, /arguments for 'terminal' are not valid JSON/);
  assert.match(results[2]!.error, /invalid arguments for 'read_file': path: /);
  assert.match(results[3]!.error, /explode failed: kaboom/);
  assert.deepEqual(
    result.toolCalls.map((call) => call.ok),
    [false, false, false, false],
  );
  assert.equal(result.messages.at(-1)!.content, 'done despite errors');
});

test('max_turns: one last call without tools asks for the final answer', async (t) => {
  const script = conversationScript([
    callTool('terminal', { command: 'echo 1' }),
    callTool('terminal', { command: 'echo 2' }),
    reply('final after grace'),
  ]);
  const { sandbox, model, tools, messages, server } = await setup(t, script);
  const result = await runAgent({ model, tools, messages, sandbox, maxTurns: 2 });
  assert.equal(result.finishReason, 'max_turns');
  assert.equal(result.turns, 2);
  assert.equal(result.apiCalls, 3);
  assert.equal(server.requests[2]!.tools, undefined, 'the grace call offers no tools');
  assert.deepEqual(result.messages.slice(-2), [
    { role: 'user', content: GRACE_PROMPT },
    { role: 'assistant', content: 'final after grace' },
  ]);
});

test('parallel tool calls run concurrently and keep their order', async (t) => {
  const script = conversationScript([
    callTools([
      { name: 'terminal', arguments: { command: 'sleep 0.6; echo first' }, id: 'one' },
      { name: 'terminal', arguments: { command: 'echo second' }, id: 'two' },
      { name: 'terminal', arguments: { command: 'sleep 0.3; echo third' }, id: 'three' },
    ]),
    reply('ok'),
  ]);
  // A fresh shell per call: the persistent shell runs one call at a time, by design.
  const { sandbox, model, tools, messages } = await setup(t, script, [], { persistent: false });
  const finished: string[] = [];
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 3,
    onEvent: (event) => {
      if (event.type === 'tool_end') finished.push(event.call.id);
    },
  });
  const toolMessages = result.messages.filter((message) => message.role === 'tool');
  assert.deepEqual(
    toolMessages.map((message) => message.tool_call_id),
    ['one', 'two', 'three'],
  );
  assert.deepEqual(
    toolMessages.map((message) => (JSON.parse(message.content as string) as { output: string }).output),
    ['first', 'second', 'third'].map(
      (word) => `${word}\n[this run starts a fresh shell per call: cd and variables do not carry over]`,
    ),
  );
  assert.deepEqual(finished, ['two', 'three', 'one'], 'they ran at the same time, so they ended shortest first');
});

test('abort during a long tool: the tool is killed, "[interrupted]" appended, finish aborted', async (t) => {
  const script = conversationScript([
    callTool('terminal', { command: 'sleep 30; echo never > late.txt' }, { id: 'slow' }),
  ]);
  const { sandbox, model, tools, messages } = await setup(t, script);
  const controller = new AbortController();
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 3,
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === 'tool_start') setTimeout(() => controller.abort(), 200);
    },
  });
  assert.equal(result.finishReason, 'aborted');
  const last = result.messages.at(-1)!;
  assert.equal(last.role, 'tool');
  assert.match(last.content as string, /\[interrupted\]/);
  assert.ok(result.timings.duration_ms < 20_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  // Whole-line matches: other processes on a shared machine may run e.g. `sleep 300`.
  const check = await sandbox.exec('ps -eo args | grep -cE "^(sleep 30|.*[s]leep 30; echo never.*)$" || true');
  assert.equal(check.stdout.trim(), '0', 'the sleep was killed with its tool call');
});

test('empty answers are retried twice, then finish "empty"; length finishes "length"', async (t) => {
  const empty = await setup(t, () => emptyReply());
  const result = await runAgent({
    model: empty.model,
    tools: empty.tools,
    messages: empty.messages,
    sandbox: empty.sandbox,
    maxTurns: 3,
  });
  assert.equal(result.finishReason, 'empty');
  assert.equal(result.apiCalls, 3);
  assert.equal(empty.server.requests.length, 3);

  const cut = await setup(t, () => truncatedReply('The answer is'));
  const truncated = await runAgent({
    model: cut.model,
    tools: cut.tools,
    messages: cut.messages,
    sandbox: cut.sandbox,
    maxTurns: 3,
  });
  assert.equal(truncated.finishReason, 'length');
  assert.equal(truncated.messages.at(-1)!.content, 'The answer is');
});

test('an endpoint error ends the run with api_error and the ModelError', async (t) => {
  const { sandbox, model, tools, messages } = await setup(t, () => ({
    fault: 'http',
    status: 401,
    body: { error: { message: 'bad key' } },
  }));
  const result = await runAgent({ model, tools, messages, sandbox, maxTurns: 3 });
  assert.equal(result.finishReason, 'api_error');
  assert.equal(result.error?.name, 'ModelError');
  assert.match(result.error!.message, /401/);
  assert.match(result.error!.message, /bad key/);
});

test('a result over the budget is spilled to a file in the sandbox with a preview', async (t) => {
  const script = conversationScript([
    callTool('terminal', { command: 'python3 -c "print(\'x\' * 30000)"' }, { id: 'big' }),
    reply('ok'),
  ]);
  const { sandbox, model, tools, messages } = await setup(t, script);
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 3,
    budget: {
      result_max_chars: 10_000,
      turn_max_chars: 200_000,
      preview_chars: 500,
      toolset_max_chars: {},
      spill_dir: '.traj/tool-results',
    },
  });
  const spilled = result.messages.find((message) => message.role === 'tool')!.content as string;
  assert.ok(spilled.length < 1_000);
  const path = /saved at (\S+) /.exec(spilled)![1]!;
  const saved = (await sandbox.readFile(path)).toString();
  assert.ok(saved.length > 30_000);
  assert.ok(saved.startsWith(spilled.slice(0, 400)));
});

test('one step runs its calls at once, at most toolConcurrency of them', async (t) => {
  let running = 0;
  let most = 0;
  const wait = defineTool({
    name: 'wait',
    toolset: 'test',
    description: 'waits a little',
    parameters: z.object({}),
    run: async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
      return 'waited';
    },
  });
  const calls = (count: number) =>
    callTools(Array.from({ length: count }, (_, index) => ({ name: 'wait', arguments: {}, id: `w${index}` })));
  for (const [count, toolConcurrency, expected] of [
    [5, 2, 2],
    [5, 8, 5],
    [3, 3, 3],
  ] as const) {
    most = 0;
    const script = conversationScript([calls(count), reply('done')]);
    const { sandbox, model, tools, messages } = await setup(t, script, [wait]);
    const result = await runAgent({ model, tools, messages, sandbox, maxTurns: 3, toolConcurrency });
    assert.equal(result.toolCalls.filter((call) => call.ok).length, count);
    assert.equal(most, expected, `${count} calls, toolConcurrency ${toolConcurrency}`);
  }
});
