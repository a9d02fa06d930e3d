import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  callTool,
  conversationScript,
  createEchoScript,
  cycleScript,
  echoScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type Script,
  type ScriptedServer,
} from '../../src/testing/index.js';

async function withServer<T>(script: Script, run: (server: ScriptedServer) => Promise<T>): Promise<T> {
  const server = await startScriptedServer(script);
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

async function post(server: ScriptedServer, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const USER = { role: 'user', content: 'count the files' };
const TERMINAL_TOOL = {
  type: 'function',
  function: { name: 'terminal', description: 'run a command', parameters: { type: 'object' } },
};

/** The data events of an SSE body, parsed; the final `[DONE]` marker checked and left out. */
function sseEvents(
  text: string,
): Array<{ choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: unknown }> {
  const data = text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
  assert.equal(data.pop(), '[DONE]');
  return data.map((event) => JSON.parse(event));
}

test('the server answers on 127.0.0.1 with /v1 in its URL, lists its model, and 404s other routes', async () => {
  await withServer([], async (server) => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.equal(server.url, `http://127.0.0.1:${server.port}/v1`);
    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: Array<{ id: string }> };
    assert.deepEqual(
      models.data.map((model) => model.id),
      ['traj-scripted'],
    );
    const missing = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /POST \/v1\/chat\/completions/);
    assert.equal(server.requestCount(), 0, 'only chat requests are counted');
  });
});

test('a list script answers in order, records each body, and says when it is exhausted', async () => {
  await withServer([reply('one'), reply('two')], async (server) => {
    const first = JSON.parse((await post(server, { messages: [USER], temperature: 0.5 })).text);
    assert.equal(first.choices[0].message.content, 'one');
    assert.equal(first.choices[0].finish_reason, 'stop');
    assert.equal(JSON.parse((await post(server, { messages: [USER] })).text).choices[0].message.content, 'two');
    const third = await post(server, { messages: [USER] });
    assert.equal(third.status, 400);
    assert.match(third.text, /the script has 2 responses and this is request 3/);
    assert.equal(server.requestCount(), 3);
    assert.equal(server.requests.length, 3);
    assert.equal(server.requests[0]!.temperature, 0.5);
  });
});

test('a body that is not a chat request is a 400 naming the problem', async () => {
  await withServer([reply('never')], async (server) => {
    const response = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{"messages": ' });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /not JSON/);
    const noMessages = await post(server, { model: 'x' });
    assert.equal(noMessages.status, 400);
    assert.match(noMessages.text, /an array of messages/);
  });
});

test('a script that throws answers 400 with its message (a test bug must not look like an outage)', async () => {
  const script = () => {
    throw new Error('no step for this');
  };
  await withServer(script, async (server) => {
    const response = await post(server, { messages: [USER] });
    assert.equal(response.status, 400);
    assert.match(response.text, /the script threw: no step for this/);
  });
});

test('SSE: content, reasoning and tool-call arguments arrive in several chunks, usage only when asked', async () => {
  const script = [
    {
      reasoning_content: 'think about it',
      content: 'Here is the plan.',
      tool_calls: [{ name: 'terminal', arguments: { command: 'ls -la' } }],
    },
    reply('no usage chunk'),
  ];
  await withServer(script, async (server) => {
    const events = sseEvents(
      (await post(server, { messages: [USER], stream: true, stream_options: { include_usage: true } })).text,
    );
    const deltas = events.flatMap((event) => event.choices.map((choice) => choice.delta));
    const pieces = (field: string) =>
      deltas
        .filter((delta) => typeof delta[field] === 'string' && delta[field] !== '')
        .map((delta) => delta[field] as string);
    assert.ok(pieces('content').length >= 2);
    assert.equal(pieces('content').join(''), 'Here is the plan.');
    assert.ok(pieces('reasoning_content').length >= 2);
    assert.equal(pieces('reasoning_content').join(''), 'think about it');
    const toolPieces = deltas.flatMap(
      (delta) =>
        (delta.tool_calls as Array<{ id?: string; function: { name?: string; arguments: string } }> | undefined) ?? [],
    );
    assert.ok(toolPieces.length >= 3);
    assert.equal(toolPieces[0]!.function.name, 'terminal');
    assert.equal(toolPieces[0]!.id, 'call_0_0');
    assert.equal(toolPieces.map((piece) => piece.function.arguments).join(''), '{"command":"ls -la"}');
    assert.equal(events.at(-2)!.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(events.at(-1)!.choices, []);
    assert.ok(events.at(-1)!.usage);

    const plain = sseEvents((await post(server, { messages: [USER], stream: true })).text);
    assert.equal(plain.filter((event) => event.usage).length, 0);
  });
});

test('conversationScript picks the step from the conversation, so concurrent conversations do not interfere', async () => {
  const script = conversationScript([callTool('terminal', { command: 'ls' }), reply('there are 3 files')]);
  await withServer(script, async (server) => {
    const turnTwo = {
      messages: [
        USER,
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'tool', tool_call_id: 'c', content: '3' },
      ],
    };
    const answers = await Promise.all([
      post(server, { messages: [USER] }),
      post(server, turnTwo),
      post(server, { messages: [USER] }),
      post(server, turnTwo),
    ]);
    const messages = answers.map((answer) => JSON.parse(answer.text).choices[0].message);
    assert.equal(messages[0].tool_calls[0].function.name, 'terminal');
    assert.equal(messages[1].content, 'there are 3 files');
    assert.equal(messages[2].tool_calls[0].function.name, 'terminal');
    assert.equal(messages[3].content, 'there are 3 files');
    const third = {
      messages: [...turnTwo.messages, { role: 'assistant', content: 'x' }, { role: 'user', content: 'more' }],
    };
    const exhausted = await post(server, third);
    assert.equal(exhausted.status, 400);
    assert.match(exhausted.text, /2 steps but the request already holds 2 assistant messages/);
  });
});

test('cycleScript answers round and round', async () => {
  await withServer(cycleScript([reply('a'), reply('b')]), async (server) => {
    const contents: string[] = [];
    for (let index = 0; index < 5; index++)
      contents.push(JSON.parse((await post(server, { messages: [USER] })).text).choices[0].message.content);
    assert.deepEqual(contents, ['a', 'b', 'a', 'b', 'a']);
  });
});

function echoAnswer(request: ChatRequest, script = echoScript) {
  return script(request, { index: 0, turn: request.messages.filter((message) => message.role === 'assistant').length });
}

test('the echo script calls terminal with the prompt words, then quotes the tool output', () => {
  const first = echoAnswer({
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: "What's in /tmp? Use `ls`; don't guess!" },
    ],
    tools: [TERMINAL_TOOL],
  });
  assert.ok(!('fault' in first && first.fault));
  const call = (first as { tool_calls: Array<{ name: string; arguments: { command: string } }> }).tool_calls[0]!;
  assert.equal(call.name, 'terminal');
  assert.equal(
    call.arguments.command,
    "echo 'What s in /tmp? Use ls don t guess!'",
    'quotes and shell characters are stripped',
  );

  const toolResult = {
    role: 'tool',
    tool_call_id: 'call_0_0',
    content: JSON.stringify({ exit_code: 0, output: 'What s in /tmp?\n' }),
  };
  const second = echoAnswer({
    messages: [USER, { role: 'assistant', content: null }, toolResult],
    tools: [TERMINAL_TOOL],
  }) as { content: string };
  assert.equal(second.content, 'The tool printed: What s in /tmp?');
});

test('the echo script answers at once without a terminal tool, and honours toolTurns', () => {
  const plain = echoAnswer({ messages: [USER], tools: [{ type: 'function', function: { name: 'read_file' } }] }) as {
    content: string;
    tool_calls?: unknown;
  };
  assert.equal(plain.tool_calls, undefined);
  assert.match(plain.content, /^You wrote: "count the files"/);

  const twoTurns = createEchoScript({ toolTurns: 2 });
  const tool = { role: 'tool', tool_call_id: 'x', content: 'plain text output' };
  const secondTurn = echoAnswer(
    { messages: [USER, { role: 'assistant', content: null }, tool], tools: [TERMINAL_TOOL] },
    twoTurns,
  ) as { tool_calls: unknown[] };
  assert.equal(secondTurn.tool_calls.length, 1);
  const thirdTurn = echoAnswer(
    {
      messages: [USER, { role: 'assistant', content: null }, tool, { role: 'assistant', content: null }, tool],
      tools: [TERMINAL_TOOL],
    },
    twoTurns,
  ) as { content: string };
  assert.equal(thirdTurn.content, 'The tool printed: plain text output');
});

test('latency delays each answer without blocking concurrent ones', async () => {
  const server = await startScriptedServer(() => reply('slow'), { latencyMs: 100 });
  try {
    await Promise.all(Array.from({ length: 5 }, () => post(server, { messages: [USER] })));
    assert.equal(server.maxInFlight(), 5, 'all five were held by the latency at once');
    assert.equal(server.inFlight(), 0);
  } finally {
    await server.close();
  }
});
