import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import {
  callTool,
  conversationScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { stdioFixture } from '../fixtures/mcp/fixture.js';
import { dockerRequired, dockerUnavailableReason } from '../helpers/docker.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const endpointArgs = (url: string) => ['--base-url', url, '--model', 'scripted-chat', '--api-key-env', 'NO_KEY'];

/** Answers by the last user message; a pending tool result is always answered in words. */
function byLastUserMessage(request: ChatRequest): ScriptedResponse {
  const last = request.messages.at(-1)!;
  const user = String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');
  if (last.role === 'tool') return reply(`done with ${user}`);
  if (user === 'plan')
    return callTool('todo', { todos: [{ id: '1', content: 'write the tests', status: 'in_progress' }] });
  // Hermes' one todo tool: no arguments reads the list.
  if (user === 'status') return callTool('todo', {});
  return reply(`ok: ${user}`, { reasoning_content: 'secret thoughts' });
}

const requestFor = (requests: ChatRequest[], text: string) =>
  requests.find((request) => request.messages.at(-1)?.content === text)!;
const toolNames = (request: ChatRequest) => (request.tools ?? []).map((tool) => tool.function.name);

test('slash commands: settings apply after /reset, todo state spans turns, /reasoning, /save, /export, /usage, /help, //', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const server = await startScriptedServer(byLastUserMessage);
  t.after(() => server.close());
  const input = [
    'plan',
    'status',
    'shown thoughts',
    '/reasoning',
    'hidden thoughts',
    '/toolsets todo',
    '/model other-model',
    '/system Be terse.',
    'hello again',
    '/reset',
    'after reset',
    '/save my title',
    `/export ${join(directory, 'out.json')}`,
    `/export ${join(directory, 'out.jsonl')} sharegpt`,
    '/usage',
    '/help',
    '/bogus',
    '//slash message',
    '/quit',
    'never sent',
  ];
  const result = await runCli(['chat', ...endpointArgs(server.url), '--toolsets', 'terminal,todo'], {
    env: { TRAJ_HOME: home },
    stdin: `${input.join('\n')}\n`,
  });
  assert.equal(result.code, 0, result.stderr);
  const { stdout } = result;

  const status = requestFor(server.requests, 'status');
  const todoRead = server.requests[server.requests.indexOf(status) + 1]!.messages.at(-1)!;
  assert.equal(todoRead.role, 'tool');
  assert.match(String(todoRead.content), /write the tests/, 'the todo list written in one turn is read in the next');

  const [beforeToggle, afterToggle] = stdout.split('reasoning hidden');
  assert.match(beforeToggle!, /\(thinking\) secret thoughts\nok: shown thoughts/);
  assert.doesNotMatch(afterToggle!, /secret thoughts/);
  assert.match(afterToggle!, /^ok: hidden thoughts$/m);

  const first = server.requests[0]!;
  const hello = requestFor(server.requests, 'hello again');
  assert.equal(hello.model, 'scripted-chat', 'settings changes wait for the next session');
  assert.deepEqual(toolNames(hello), toolNames(first));
  assert.equal(hello.messages[0]!.content, first.messages[0]!.content);
  assert.match(stdout, /toolsets for the next session: todo \(applies from the next session: \/reset\)/);

  const fresh = requestFor(server.requests, 'after reset');
  assert.equal(fresh.model, 'other-model');
  assert.deepEqual(toolNames(fresh), ['todo']);
  assert.deepEqual(
    fresh.messages.map((message) => message.role),
    ['system', 'user'],
  );
  assert.match(String(fresh.messages[0]!.content), /^Be terse\.\n\nAvailable toolsets: todo\./);

  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  const sessions = db.prepare('SELECT id, title, model FROM sessions ORDER BY created_at').all() as {
    id: string;
    title: string | null;
    model: string;
  }[];
  db.close();
  assert.equal(sessions.length, 2);
  assert.deepEqual(
    sessions.map((session) => [session.title, session.model]),
    [
      [null, 'scripted-chat'],
      ['my title', 'other-model'],
    ],
  );

  const exported = JSON.parse(readFileSync(join(directory, 'out.json'), 'utf8')) as {
    id: string;
    messages: { role: string; content: string }[];
    tools: unknown[];
  };
  assert.equal(exported.id, sessions[1]!.id);
  assert.deepEqual(
    exported.messages.map((message) => message.content),
    [fresh.messages[0]!.content, 'after reset', 'ok: after reset'],
  );
  assert.deepEqual(
    exported.tools.map((tool) => (tool as { function: { name: string } }).function.name),
    ['todo'],
  );
  const sharegptLines = readFileSync(join(directory, 'out.jsonl'), 'utf8').trimEnd().split('\n');
  assert.equal(sharegptLines.length, 1);
  assert.deepEqual(
    (JSON.parse(sharegptLines[0]!) as { conversations: { from: string }[] }).conversations.map((turn) => turn.from),
    ['system', 'human', 'gpt'],
  );

  assert.match(
    stdout,
    /^session \S+: 1 model calls · \d+ prompt \(\d+ cached\) \+ \d+ completion tokens \(\d+ reasoning\) · cost unknown \(no price known for other-model\) · 3 messages$/m,
  );
  assert.match(stdout, /^ {2}\/fork RUN KEY \[TURN\] +continue a stored rollout/m);
  assert.match(stdout, /^ {2}\/quit +leave the chat .*\(also \/exit, \/q\)$/m);
  assert.match(stdout, /unknown command \/bogus .*start a message with \/\/ to send a leading \//);
  assert.ok(requestFor(server.requests, '/slash message'), '// sends a message starting with /');
  assert.ok(
    !server.requests.some((request) => JSON.stringify(request.messages).includes('never sent')),
    '/quit stops reading',
  );
});

test('an MCP toolset from --config works in chat', async (t) => {
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, JSON.stringify({ mcp_servers: { test: stdioFixture() } }));
  const server = await startScriptedServer(
    conversationScript([callTool('mcp_test_echo', { text: 'ping from chat' }), reply('echoed')]),
  );
  t.after(() => server.close());
  const result = await runCli(['chat', ...endpointArgs(server.url), '--config', config, '--toolsets', 'mcp:test'], {
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: 'echo it\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(toolNames(server.requests[0]!).includes('mcp_test_echo'));
  assert.match(result.stdout, /✓ mcp_test_echo .*ping from chat/);
  assert.match(String(server.requests[1]!.messages.at(-1)!.content), /ping from chat/);
});

test('the docker sandbox runs a dangerous-looking command without asking (the container is the boundary)', async (t) => {
  const reason = await dockerUnavailableReason();
  if (reason) {
    if (dockerRequired()) assert.fail(reason);
    t.skip(reason);
    return;
  }
  const directory = temporaryDirectory(t);
  const command = 'mkdir -p /tmp/scratch && cd /tmp/scratch && touch a b && rm -rf * && echo "left: $(ls | wc -l)"';
  const server = await startScriptedServer(conversationScript([callTool('terminal', { command }), reply('emptied')]));
  t.after(() => server.close());
  const result = await runCli(['chat', ...endpointArgs(server.url), '--sandbox', 'docker', '--toolsets', 'terminal'], {
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: 'empty the scratch folder\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stdout, /allow\?|dangerous commands ask first/);
  assert.match(result.stdout, /^sandbox docker \/app$/m);
  assert.match(result.stdout, /✓ terminal .*exit 0 · left: 0/);
});
