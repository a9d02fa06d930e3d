import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { runConversation, userView } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/index.js';
import type { Message } from '../../src/model/messages.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { defineTool } from '../../src/tools/tool.js';
import {
  callTool,
  conversationScript,
  reply,
  scriptByModel,
  startScriptedServer,
  type ChatRequest,
  type Script,
} from '../../src/testing/index.js';

const lookups: string[] = [];
const lookUp = defineTool({
  name: 'look_up',
  toolset: 'environment',
  description: 'Look up an order',
  parameters: z.object({ order: z.string() }),
  run: ({ order }) => {
    lookups.push(order);
    return { order, status: 'delivered' };
  },
});
const handOff = defineTool({
  name: 'hand_off',
  toolset: 'environment',
  description: 'Transfer to a human',
  parameters: z.object({}),
  run: () => 'transferred',
});

async function setup(t: { after(fn: () => unknown): void }, agent: Script, user: Script) {
  const server = await startScriptedServer(scriptByModel({ agent, customer: user }));
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const client = (model: string) =>
    createModelClient({ base_url: server.url, model, api_key_env: 'NO_KEY', max_retries: 0 });
  const messages: Message[] = [
    { role: 'system', content: 'You are a support agent.' },
    { role: 'user', content: 'Hi, my order is broken.' },
  ];
  return {
    server,
    options: {
      model: client('agent'),
      tools: [lookUp, handOff],
      messages,
      sandbox,
      maxTurns: 10,
      user: {
        model: client('customer'),
        name: 'customer',
        system: 'You are Ann. Goal: a refund for W1.',
        stopToken: '###STOP###',
        maxTurns: 5,
      },
    },
  };
}

/** The user's last message in the user model's view (the agent's last reply). */
const lastAgentText = (request: ChatRequest) => String(request.messages.at(-1)?.content);

test('the user answers until its stop token; the record holds both sides in order and the user model sees roles flipped', async (t) => {
  const agent = conversationScript([
    reply('Which order is it?'),
    callTool('look_up', { order: 'W1' }),
    reply('Order W1 is refunded.'),
  ]);
  const user = (request: ChatRequest) =>
    lastAgentText(request).includes('refunded') ? reply('Thanks! ###STOP###') : reply('It is order W1.');
  const { server, options } = await setup(t, agent, user);
  const result = await runConversation(options);
  assert.equal(result.finishReason, 'stop');
  assert.deepEqual(
    result.messages.map((message) => `${message.role}: ${message.content ?? '(tools)'}`),
    [
      'system: You are a support agent.',
      'user: Hi, my order is broken.',
      'assistant: Which order is it?',
      'user: It is order W1.',
      'assistant: (tools)',
      'tool: {"order":"W1","status":"delivered"}',
      'assistant: Order W1 is refunded.',
      'user: Thanks! ###STOP###',
    ],
  );
  assert.equal(result.turns, 3, 'agent turns span the conversation');
  assert.equal(result.simulatedUser?.stop, 'stop_token');
  assert.equal(result.simulatedUser?.turns, 2);
  assert.deepEqual(
    result.toolCalls.map((call) => call.name),
    ['look_up'],
  );
  // The user's usage is its own, and also in the rollout's whole spend.
  const userRequests = server.requests.filter((request) => request.model === 'customer');
  assert.equal(userRequests.length, 2);
  assert.ok(result.simulatedUser!.usage.prompt_tokens > 0);
  const agentOnly = server.requests.filter((request) => request.model === 'agent').length;
  assert.equal(result.apiCalls, agentOnly);
  assert.deepEqual(
    userRequests[1]!.messages.map((message) => message.role),
    ['system', 'assistant', 'user', 'assistant', 'user'],
  );
  assert.equal(userRequests[1]!.messages[0]!.content, 'You are Ann. Goal: a refund for W1.');
  assert.equal(userRequests[1]!.tools, undefined, 'the user model is offered no tools');
  assert.ok(!JSON.stringify(userRequests[1]!.messages).includes('delivered'), 'tool results stay out of its view');
});

test("the user's turn limit ends the conversation after the agent's reply", async (t) => {
  const agent = (_request: ChatRequest) => reply('Can you tell me more?');
  const user = (_request: ChatRequest) => reply('Still broken.');
  const { options } = await setup(t, agent, user);
  const result = await runConversation({ ...options, user: { ...options.user, maxTurns: 2 } });
  assert.equal(result.simulatedUser?.stop, 'turn_limit');
  assert.equal(result.simulatedUser?.turns, 2);
  assert.equal(result.turns, 3);
  assert.equal(result.messages.at(-1)?.role, 'assistant');
});

test('a terminal tool ends the conversation once it has run; the agent turn limit spans the whole conversation', async (t) => {
  const agent = conversationScript([reply('Order?'), callTool('hand_off', {}), reply('never sent')]);
  const user = (_request: ChatRequest) => reply('W1, and I want a human.');
  const { server, options } = await setup(t, agent, user);
  const result = await runConversation({ ...options, terminalTools: ['hand_off'] });
  assert.equal(result.finishReason, 'stop');
  assert.equal(result.simulatedUser?.stop, 'terminal_tool');
  assert.equal(result.messages.at(-1)?.role, 'tool');
  assert.equal(result.messages.at(-1)?.content, 'transferred');
  assert.equal(server.requests.filter((request) => request.model === 'agent').length, 2);

  const chatty = (_request: ChatRequest) => reply('Tell me more.');
  const second = await setup(t, chatty, user);
  const limited = await runConversation({ ...second.options, maxTurns: 3 });
  assert.equal(limited.finishReason, 'max_turns');
  assert.equal(limited.turns, 3);
  assert.equal(limited.simulatedUser?.stop, 'agent');
});

test('a failing user model ends the conversation as api_error with its message; no user means one agent run', async (t) => {
  const agent = (_request: ChatRequest) => reply('Hello?');
  const user: Script = [{ fault: 'http', status: 401, body: { error: { message: 'bad key for the user model' } } }];
  const { options } = await setup(t, agent, user);
  const failed = await runConversation(options);
  assert.equal(failed.finishReason, 'api_error');
  assert.match(failed.error?.message ?? '', /bad key for the user model/);
  const { user: _ignored, ...alone } = options;
  const single = await runConversation(alone);
  assert.equal(single.finishReason, 'stop');
  assert.equal(single.simulatedUser, undefined);
  assert.equal(single.messages.length, 3);
});

test('a user reply with no text ends the conversation as user_empty, without an empty user turn', async (t) => {
  const agent = (_request: ChatRequest) => reply('Anything else?');
  const { options } = await setup(t, agent, [reply('')]);
  const result = await runConversation(options);
  assert.equal(result.simulatedUser?.stop, 'user_empty');
  assert.equal(result.messages.at(-1)?.role, 'assistant');
});

test('userView: roles flipped, tool traffic and the grace prompt left out', () => {
  const view = userView('persona', [
    { role: 'system', content: 'agent system' },
    { role: 'user', content: 'opening' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c', content: 'secret' },
    { role: 'assistant', content: 'answer' },
  ]);
  assert.deepEqual(view, [
    { role: 'system', content: 'persona' },
    { role: 'assistant', content: 'opening' },
    { role: 'user', content: 'answer' },
  ]);
});
