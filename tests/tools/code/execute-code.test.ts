import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { runAgent } from '../../../src/agent/index.js';
import { createModelClient } from '../../../src/model/index.js';
import { createLocalSandbox, createSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { callTool, reply, startScriptedServer, type ScriptFunction } from '../../../src/testing/index.js';
import { buildRecord } from '../../../src/trajectory/index.js';
import { loadToolRegistry, toolSpec } from '../../../src/tools/index.js';
import { requireDockerOrSkip, uniqueRunName } from '../../helpers/docker.js';
import { ToolSettingsSchema } from '../../../src/config/tool-settings.js';

/** The parent sends one execute_code call with `code`, then answers. */
function scriptCalling(code: string): ScriptFunction {
  return (request) => {
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    return turn === 0 ? callTool('execute_code', { code }, { id: 'call_code' }) : reply('done');
  };
}

async function runScript(
  t: TestContext,
  code: string,
  options: { sandbox?: Sandbox; config?: Record<string, unknown> } = {},
) {
  const server = await startScriptedServer(scriptCalling(code));
  const sandbox = options.sandbox ?? (await createLocalSandbox({ kind: 'local' }));
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 0 });
  const tools = (await loadToolRegistry()).select(['terminal', 'file', 'code_execution'], { env: process.env });
  const services = {
    settings: ToolSettingsSchema.parse({ code_execution: options.config ?? {} }),
    auxiliary: {},
    model: () => model,
  };
  const result = await runAgent({
    model,
    tools,
    messages: [
      { role: 'system', content: 'test' },
      { role: 'user', content: 'run a script' },
    ],
    sandbox,
    maxTurns: 3,
    services,
  });
  const record = buildRecord({
    key: 'k',
    sample: 0,
    result,
    tools: tools.map(toolSpec),
    toolsets: [],
    model: 'scripted',
    source: { dataset: 'x', row: 0, fields: {} },
  });
  const toolMessage = result.messages.find((message) => message.role === 'tool')!;
  return {
    result,
    record,
    sandbox,
    answer: JSON.parse(String(toolMessage.content)) as { output: string; tool_calls: number; error?: string },
  };
}

const THREE_TOOLS_IN_A_LOOP = `
from hermes_tools import terminal, write_file, read_file
total = 0
for i in range(3):
    write_file(f"notes/n{i}.txt", f"line {i}\\n" * (i + 1))
    counted = terminal(f"wc -l < notes/n{i}.txt")
    total += int(counted["output"])
    shown = read_file(f"notes/n{i}.txt")
print("lines:", total)
print("last read ends with:", shown["content"].splitlines()[-1] if isinstance(shown, dict) and "content" in shown else str(shown).splitlines()[-1])
`;

async function threeToolsInALoop(t: TestContext, sandbox?: Sandbox) {
  const { record, answer, result } = await runScript(t, THREE_TOOLS_IN_A_LOOP, { sandbox });
  assert.equal(answer.error, undefined, answer.error);
  assert.match(answer.output, /^lines: 6\nlast read ends with: .*line 2\n$/);
  assert.equal(answer.tool_calls, 9);
  assert.deepEqual(
    record.tool_stats.map((stat) => [stat.name, stat.calls, stat.ok]),
    [
      ['execute_code', 1, 1],
      ['read_file', 3, 3],
      ['terminal', 3, 3],
      ['write_file', 3, 3],
    ],
  );
  assert.equal(record.code_calls.length, 9);
  assert.deepEqual(
    record.code_calls.slice(0, 3).map((call) => [call.call_id, call.name, JSON.parse(call.arguments)]),
    [
      ['call_code', 'write_file', { path: 'notes/n0.txt', content: 'line 0\n' }],
      ['call_code', 'terminal', { command: 'wc -l < notes/n0.txt' }],
      ['call_code', 'read_file', { path: 'notes/n0.txt' }],
    ],
  );
  assert.match(record.code_calls[1]!.result, /"output":"1\\n"/);
  // The messages view is what the model saw: one call, one result, no inner calls.
  assert.deepEqual(
    result.messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
}

describe('execute_code', () => {
  test('a script calls three tools in a loop: only its stdout returns, inner calls in tool_stats and code_calls (local)', async (t) => {
    await threeToolsInALoop(t);
  });

  test('the same script in the Docker sandbox', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    await threeToolsInALoop(t, await createSandbox({ kind: 'docker', run: uniqueRunName('code'), key: 'loop' }));
  });

  test('the call limit raises ToolCallLimit in the script: a readable traceback, the calls before it kept', async (t) => {
    const code =
      'from hermes_tools import terminal\nfor i in range(10):\n    terminal(f"echo {i}")\n    print("call", i)\n';
    const { answer, record } = await runScript(t, code, { config: { max_tool_calls: 4 } });
    assert.equal(answer.output, 'call 0\ncall 1\ncall 2\ncall 3\n');
    assert.equal(answer.tool_calls, 4);
    assert.match(answer.error!, /Traceback \(most recent call last\):\n {2}File "script.py", line 3, in <module>\n/);
    assert.match(answer.error!, /ToolCallLimit: tool call limit reached: a script may make 4 tool calls$/);
    assert.deepEqual(
      record.tool_stats.find((stat) => stat.name === 'terminal'),
      { name: 'terminal', calls: 4, ok: 4, errors: 0 },
    );
  });

  test('the time limit kills the script and what it started; the output so far is kept', async (t) => {
    const code =
      'import subprocess, time\nsubprocess.Popen(["sleep", "300"])\nprint("started", flush=True)\ntime.sleep(60)\n';
    const { answer, sandbox } = await runScript(t, code, { config: { timeout: 1.5 } });
    assert.equal(answer.output, 'started\n');
    assert.equal(answer.error, 'timed out after 1.5 s: the script and the processes it started were killed');
    const ps = await sandbox.exec('ps -eo args');
    assert.doesNotMatch(ps.stdout, /sleep 300/);
  });

  test('a script error returns its traceback; tools outside the allowed list are not in the module', async (t) => {
    const code = 'import hermes_tools\nprint(sorted(hermes_tools.__all__))\nprint(1 / 0)\n';
    const { answer } = await runScript(t, code, { config: { tools: ['terminal', 'execute_code'] } });
    // Hermes' module also carries three helpers (json_parse, retry, shell_quote); no other tool.
    assert.equal(answer.output, "['json_parse', 'retry', 'shell_quote', 'terminal']\n");
    assert.match(
      answer.error!,
      /^Traceback \(most recent call last\):\n {2}File "script.py", line 3, in <module>\n {4}print\(1 \/ 0\)\n[\s\S]*ZeroDivisionError: division by zero$/,
    );
  });
});
