import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test, type TestContext } from 'node:test';
import { createLocalSandbox, createSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { callTool, reply, type ChatRequest, type ScriptFunction } from '../../../src/testing/index.js';
import { disposeToolState } from '../../../src/tools/index.js';
import { requireDockerOrSkip, uniqueRunName } from '../../helpers/docker.js';
import { scriptedTerminalRun } from '../scripted-terminal-run.js';
import { callTool as runTool, jsonOf, toolContext } from '../tool-context.js';

const lastResult = (request: ChatRequest) =>
  JSON.parse(String(request.messages.at(-1)!.content)) as Record<string, unknown>;

/** A model that starts an HTTP server in the background, waits for it, requests a page, reads the log, kills it. */
const serverScenario: ScriptFunction = (request) => {
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  const results = request.messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(String(message.content)) as Record<string, unknown>);
  switch (turn) {
    case 0:
      return callTool('terminal', { command: 'exec python3 -u -m http.server 0 --bind 127.0.0.1', background: true });
    case 1:
      return callTool('process', { action: 'wait', session_id: String(results[0]!.session_id), timeout: 2 });
    case 2: {
      const port = /port (\d+)/.exec(String(results[1]!.new_output))![1];
      return callTool('terminal', {
        command: `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/').status)"`,
      });
    }
    case 3:
      return callTool('process', { action: 'log', session_id: 'proc_1' });
    case 4:
      return callTool('process', { action: 'kill', session_id: 'proc_1' });
    case 5:
      return callTool('terminal', { command: 'ps -eo args | grep -c [h]ttp.server; true' });
    default:
      return reply(`done: ${JSON.stringify(lastResult(request))}`);
  }
};

async function serverLifecycle(t: TestContext, sandbox: Sandbox) {
  const results = await scriptedTerminalRun<Record<string, unknown>>(t, sandbox, serverScenario, 'serve');
  assert.equal(results[0]!.session_id, 'proc_1');
  assert.equal(results[0]!.output, 'Background process started');
  assert.equal(results[1]!.state, 'running', 'the server still runs after the wait timed out');
  assert.match(String(results[1]!.new_output), /^Serving HTTP on 127\.0\.0\.1 port \d+/);
  assert.deepEqual(results[2], { exit_code: 0, output: '200\n' });
  assert.match(String(results[3]!.output), /Serving HTTP[\s\S]*"GET \/ HTTP\/1\.1" 200 -/);
  assert.equal(results[3]!.lines, 2);
  assert.equal(results[4]!.state, 'killed');
  assert.deepEqual(results[5], { exit_code: 0, output: '0\n' });
}

describe('background processes and the process tool', () => {
  test('a server started in the background, waited for, requested, its log read, killed (local)', async (t) => {
    await serverLifecycle(t, await createLocalSandbox({ kind: 'local' }));
  });

  test('the same in the Docker sandbox', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    await serverLifecycle(t, await createSandbox({ kind: 'docker', run: uniqueRunName('process'), key: 'server' }));
  });

  test('write goes to stdin; poll returns only new output; the exit code is kept', async (t) => {
    const sandbox = await createLocalSandbox({ kind: 'local' });
    t.after(() => sandbox.dispose());
    const context = toolContext(sandbox);
    const started = jsonOf(
      await runTool(
        'terminal',
        { command: 'echo ready; read line; echo "got:$line"; exit 3', background: true },
        context,
      ),
    );
    const id = String(started.session_id);
    const waited = jsonOf(await runTool('process', { action: 'wait', session_id: id, timeout: 1 }, context));
    assert.deepEqual([waited.state, waited.new_output], ['running', 'ready\n']);
    const first = jsonOf(await runTool('process', { action: 'poll', session_id: id }, context));
    assert.deepEqual(
      [first.state, first.new_output],
      ['running', ''],
      'poll returns only output it has not returned before',
    );
    assert.deepEqual(jsonOf(await runTool('process', { action: 'write', session_id: id, data: 'hello\n' }, context)), {
      session_id: id,
      written_bytes: 6,
    });
    const done = jsonOf(await runTool('process', { action: 'wait', session_id: id, timeout: 10 }, context));
    assert.equal(done.state, 'exited');
    assert.equal(done.exit_code, 3);
    assert.equal(done.new_output, 'got:hello\n');
    const again = await runTool('process', { action: 'write', session_id: id, data: 'more\n' }, context);
    assert.match(again.content, /cannot write to proc_1: it is no longer running/);
    const unknown = await runTool('process', { action: 'poll', session_id: 'proc_9' }, context);
    assert.match(unknown.content, /no background process 'proc_9'.*known: proc_1/);
    const listed = jsonOf<{ processes: Array<{ session_id: string; state: string }> }>(
      await runTool('process', { action: 'list' }, context),
    );
    assert.deepEqual(
      listed.processes.map((process) => [process.session_id, process.state]),
      [['proc_1', 'exited']],
    );
  });

  test('everything still running is killed when the rollout ends (tool state, then the sandbox)', async (t) => {
    const sandbox = await createLocalSandbox({ kind: 'local' });
    t.after(() => sandbox.dispose());
    const context = toolContext(sandbox);
    const marker = 3_000 + Math.floor(Math.random() * 900);
    await runTool('terminal', { command: `sleep ${marker}`, background: true }, context);
    await runTool('terminal', { command: `bash -c 'sleep ${marker + 1}; true'`, background: true }, context);
    const running = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => new RegExp(`^sleep ${marker}|^sleep ${marker + 1}`).test(line));
    assert.equal(running().length, 2);
    await disposeToolState(context.state);
    await sandbox.dispose();
    assert.deepEqual(running(), []);
  });
});
