import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { CHILD_SYSTEM_PROMPT } from '../../src/agent/index.js';
import {
  callTool,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const turn = (request: ChatRequest) => request.messages.filter((message) => message.role === 'assistant').length;

/** "delegate" makes the chat delegate to a child that runs one command; "script" runs a script making two calls. */
function script(request: ChatRequest): ScriptedResponse {
  if (request.messages[0]?.content === CHILD_SYSTEM_PROMPT) {
    return turn(request) === 0 ? callTool('terminal', { command: 'echo from-the-child' }) : reply('the child says hi');
  }
  const users = request.messages.filter((message) => message.role === 'user');
  const last = String(users.at(-1)?.content);
  const answered = request.messages.at(-1)?.role === 'tool';
  if (answered) return reply(`finished ${last}`);
  if (last === 'delegate') return callTool('delegate_task', { goal: 'say hi from a child' });
  return callTool('execute_code', {
    code: 'from hermes_tools import terminal\nfor i in range(2):\n    terminal(f"echo {i}")\nprint("two calls made")\n',
  });
}

test('traj chat offers process, execute_code and delegate_task by default and shows nested activity indented', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const args = [
    'chat',
    '--base-url',
    server.url,
    '--model',
    'scripted-chat',
    '--api-key-env',
    'NO_KEY',
    '--sandbox',
    'local',
  ];
  const result = await runCli(args, {
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: '/tools\ndelegate\nscript\n/quit\n',
  });
  assert.equal(result.code, 0, result.stderr);
  const { stdout } = result;
  for (const name of ['terminal', 'process', 'execute_code', 'delegate_task'])
    assert.match(stdout, new RegExp(`^ {2}${name} +\\[`, 'm'), `/tools lists ${name}`);
  assert.deepEqual(
    (server.requests[0]!.tools ?? [])
      .map((tool) => tool.function.name)
      .filter((name) => ['process', 'execute_code', 'delegate_task'].includes(name)),
    ['process', 'execute_code', 'delegate_task'],
  );
  // The child's call and answer, indented under the delegate_task line.
  assert.match(
    stdout,
    /⚙ delegate_task[^\n]*\n {4}│ ⚙ terminal {2}\$ echo from-the-child\n {4}│ ✓ terminal[^\n]*\n {4}│ say hi from a child: the child says hi\n {2}✓ delegate_task/,
  );
  // The script's calls, each under the execute_code line.
  assert.match(stdout, /⚙ execute_code[^\n]*\n {4}↳ terminal {2}\d+ ms\n {4}↳ terminal {2}\d+ ms\n {2}✓ execute_code/);
  assert.match(stdout, /finished script/);
});
