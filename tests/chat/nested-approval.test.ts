import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHILD_SYSTEM_PROMPT, runAgent } from '../../src/agent/index.js';
import { CommandApprover } from '../../src/chat/approval.js';
import { guardTerminal } from '../../src/chat/guarded-terminal.js';
import { createModelClient } from '../../src/model/index.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { loadToolRegistry } from '../../src/tools/index.js';

const turn = (request: ChatRequest) => request.messages.filter((message) => message.role === 'assistant').length;

test('a dangerous command from an execute_code script or a sub-agent goes through the chat approval too', async (t) => {
  const asked: string[] = [];
  const approver = new CommandApprover(
    async (command) => {
      asked.push(command);
      return 'deny';
    },
    { ids: () => [], add: () => undefined },
  );
  const server = await startScriptedServer((request) => {
    if (request.messages[0]?.content === CHILD_SYSTEM_PROMPT)
      return turn(request) === 0 ? callTool('terminal', { command: 'rm -rf /' }) : reply('child done');
    if (turn(request) === 0) {
      return callTool(
        'execute_code',
        { code: 'from hermes_tools import terminal\nprint(terminal("rm -rf ~/")["error"])\n' },
        { id: 'call_code' },
      );
    }
    return turn(request) === 1 ? callTool('delegate_task', { goal: 'clean up' }) : reply('done');
  });
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const guard = guardTerminal(approver);
  const tools = (await loadToolRegistry())
    .select(['terminal', 'code_execution', 'delegation'], { env: process.env })
    .map((tool) => (tool.name === guard.name ? guard : tool));
  const model = createModelClient({ base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 0 });
  const result = await runAgent({
    model,
    tools,
    sandbox,
    maxTurns: 5,
    messages: [
      { role: 'system', content: 'chat' },
      { role: 'user', content: 'go' },
    ],
  });
  assert.equal(result.finishReason, 'stop');
  assert.deepEqual(asked, ['rm -rf ~/', 'rm -rf /']);
  const scriptResult = JSON.parse(String(result.messages[3]!.content)) as { output: string };
  assert.match(scriptResult.output, /^the user denied this command/);
  const child = result.toolCalls.find((call) => call.name === 'delegate_task')!.subagents![0]!;
  assert.match(String(child.messages[3]!.content), /the user denied this command/);
});
