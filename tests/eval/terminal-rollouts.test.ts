import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadTasks } from '../../environments/terminal-tasks/index.js';
import { readTaskFolder, type TerminalTask } from '../../environments/terminal-tasks/task-folder.js';
import type { VerifierDetails } from '../../environments/terminal-tasks/verifier.js';
import { executeRollout, type RolloutOutcome, type RolloutSettings } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import {
  callTool,
  conversationScript,
  reply,
  startScriptedServer,
  type ScriptFunction,
} from '../../src/testing/index.js';
import { buildRoot, projectRoot } from '../../src/util/paths.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

/**
 * The terminal-tasks environment end to end in traj's local sandbox (no Docker): the executor a
 * worker thread runs, the real terminal tool, the real verifier scripts. The same tasks run in
 * containers in tests/e2e/bench-*.test.ts.
 */
const DEMO_TASKS = join(projectRoot(), 'benchmarks', 'tasks');
const services = createThreadServices();
after(() => services.close());

function settings(agent: RolloutSettings['agent'], baseUrl = 'http://127.0.0.1:9/v1'): RolloutSettings {
  return scriptedRolloutSettings(baseUrl, 'terminal-rollouts-test', {
    maxTurns: 6,
    agent,
    environmentModule: join(buildRoot(), 'environments', 'terminal-tasks', 'index.js'),
  });
}

function rollout(task: TerminalTask, agent: RolloutSettings['agent'], baseUrl?: string): Promise<RolloutOutcome> {
  return executeRollout(
    {
      key: task.name,
      sample: 0,
      toolsets: ['terminal', 'file'],
      messages: [{ role: 'user', content: task.instruction }],
      image: task.image,
      workdir: task.workdir,
      item: task,
      settings: settings(agent, baseUrl),
    },
    services,
    new AbortController().signal,
  );
}

function details(outcome: RolloutOutcome): VerifierDetails {
  return outcome.reward!.reward_details as VerifierDetails;
}

/** A local-sandbox task written for one test; its scripts use the WORKDIR/TEST_DIR/LOGS_DIR contract. */
function writeTask(root: string, name: string, files: Record<string, string>, toml = ''): TerminalTask {
  const folder = join(root, name);
  const all = {
    'task.toml': `[task]\nname = "${name}"\ncategory = "test"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 30.0\n[environment]\nlocal_sandbox = true\n${toml}`,
    'instruction.md': `task ${name}\n`,
    'tests/test.sh': 'exit 1\n',
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return readTaskFolder(folder);
}

async function scripted(script: ScriptFunction) {
  const server = await startScriptedServer(script);
  after(() => server.close());
  return server;
}

describe('terminal tasks in the local sandbox', () => {
  const demo = loadTasks({ dataset: DEMO_TASKS, sandbox: 'local' });

  it('the oracle replays each demo solution through the terminal tool and earns 1.0 on every task', async () => {
    const outcomes = await Promise.all(demo.map((task) => rollout(task, 'oracle')));
    for (const [index, outcome] of outcomes.entries()) {
      const task = demo[index]!;
      assert.equal(outcome.error, undefined, `${task.name}: ${outcome.error?.message}`);
      assert.equal(outcome.reward?.reward, 1, `${task.name}: ${JSON.stringify(outcome.reward)}`);
      assert.equal(details(outcome).source, 'reward.txt');
      assert.deepEqual(details(outcome).failed_tests, []);
      const roles = outcome.result.messages.map((message) => message.role);
      assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'assistant']);
      const call = outcome.result.messages[2]!;
      assert.ok(call.role === 'assistant' && call.tool_calls?.[0]?.function.name === 'terminal');
      assert.match(
        JSON.parse(call.tool_calls![0]!.function.arguments).command,
        /^bash \S+\/\.traj-task\/solution\/solve\.sh$/,
      );
      assert.equal(JSON.parse((outcome.result.messages[3] as { content: string }).content).exit_code, 0);
      assert.equal(outcome.result.finishReason, 'stop');
      assert.equal(outcome.result.apiCalls, 0);
      assert.deepEqual(
        outcome.result.toolCalls.map((tool) => [tool.name, tool.ok]),
        [['terminal', true]],
      );
    }
  });

  it('the no-op agent earns 0.0 on every demo task, with the failing checks named', async () => {
    const outcomes = await Promise.all(demo.map((task) => rollout(task, 'noop')));
    for (const [index, outcome] of outcomes.entries()) {
      assert.equal(outcome.reward?.reward, 0, `${demo[index]!.name}: ${JSON.stringify(outcome.reward)}`);
      assert.ok(details(outcome).failed_tests.length > 0);
      assert.equal(details(outcome).exit_code, 1);
    }
    assert.deepEqual(details(outcomes[demo.findIndex((task) => task.name === 'create-greeting-file')]!).failed_tests, [
      'greeting.txt::exists',
    ]);
  });

  it('a scripted model that does the work with ordinary tool calls earns 1.0', async () => {
    const server = await scripted(
      conversationScript([
        callTool('terminal', { command: "printf 'Hello from traj!\\n' > greeting.txt && cat greeting.txt" }),
        reply('Created greeting.txt.'),
      ]),
    );
    const outcome = await rollout(demo.find((task) => task.name === 'create-greeting-file')!, 'model', server.url);
    assert.equal(outcome.reward?.reward, 1, JSON.stringify(outcome.reward));
    assert.equal(server.requests.length, 2);
    assert.equal(outcome.result.finishReason, 'stop');
  });

  it('a model that plants tests and a reward file cannot pass: both are replaced after the rollout', async () => {
    const tamper = [
      'mkdir -p .traj-task/tests .traj-task/logs/verifier',
      'printf \'#!/bin/bash\\necho 1 > "$LOGS_DIR/verifier/reward.txt"\\nexit 0\\n\' > .traj-task/tests/test.sh',
      'echo 1 > .traj-task/logs/verifier/reward.txt',
      'ls -R .traj-task',
    ].join(' && ');
    const server = await scripted(
      conversationScript([callTool('terminal', { command: tamper }), reply('All tests pass now.')]),
    );
    const outcome = await rollout(demo.find((task) => task.name === 'create-greeting-file')!, 'model', server.url);
    const tool = outcome.result.messages.find((message) => message.role === 'tool');
    assert.match(tool!.content as string, /"exit_code":0/, 'the planting itself succeeded');
    assert.equal(outcome.reward?.reward, 0, JSON.stringify(outcome.reward));
    assert.deepEqual(details(outcome).failed_tests, ['greeting.txt::exists']);
  });

  it('the item time limit stops the agent, records agent_timeout and still scores what it left', async (t) => {
    const root = temporaryDirectory(t);
    const task = {
      ...writeTask(root, 'slow', {
        'tests/test.sh':
          'cd "$WORKDIR"; [ -f started ] && echo 1 > "$LOGS_DIR/verifier/reward.txt" || echo 0 > "$LOGS_DIR/verifier/reward.txt"\n',
      }),
      agent_timeout_sec: 1.5,
    };
    const server = await scripted(
      conversationScript([callTool('terminal', { command: 'touch started && sleep 30', timeout: 60 }), reply('done')]),
    );
    const outcome = await rollout(task, 'model', server.url);
    assert.equal(outcome.error, undefined, 'the rollout itself did not fail');
    assert.equal(outcome.result.finishReason, 'aborted');
    assert.equal(outcome.result.error?.code, 'agent_timeout');
    assert.match(outcome.result.error!.message, /1\.5 s/);
    assert.equal(outcome.reward?.reward, 1, 'the file the agent made before the limit counts');
    assert.ok(
      outcome.result.timings.duration_ms < 20_000,
      `stopped early, not after the 30 s sleep (${outcome.result.timings.duration_ms} ms)`,
    );
  });

  it('scores from reward.json, from the exit code, and as 0 when the verifier times out', async (t) => {
    const root = temporaryDirectory(t);
    const json = writeTask(root, 'json', {
      'tests/test.sh': 'echo \'{"reward": 0.5, "checks": 2}\' > "$LOGS_DIR/verifier/reward.json"\nexit 1\n',
    });
    const exitZero = writeTask(root, 'exit-zero', { 'tests/test.sh': 'echo checked\nexit 0\n' });
    const exitOne = writeTask(root, 'exit-one', { 'tests/test.sh': 'echo broken >&2\nexit 3\n' });
    const slow = writeTask(root, 'slow-verifier', { 'tests/test.sh': 'echo starting\nsleep 30\n' }, '');
    const slowTask = { ...slow, verifier_timeout_sec: 1 };
    const garbage = writeTask(root, 'garbage', { 'tests/test.sh': 'echo maybe > "$LOGS_DIR/verifier/reward.txt"\n' });
    const [a, b, c, d, e] = await Promise.all(
      [json, exitZero, exitOne, slowTask, garbage].map((task) => rollout(task, 'noop')),
    );
    assert.deepEqual([a!.reward?.reward, a!.reward?.scores], [0.5, { reward: 0.5, checks: 2 }]);
    assert.equal(details(a!).source, 'reward.json');
    assert.deepEqual([b!.reward?.reward, details(b!).source, details(b!).exit_code], [1, 'exit_code', 0]);
    assert.match(details(b!).output_tail, /checked/);
    assert.deepEqual([c!.reward?.reward, details(c!).source, details(c!).exit_code], [0, 'exit_code', 3]);
    assert.match(details(c!).output_tail, /broken/);
    assert.deepEqual([d!.reward?.reward, details(d!).source, details(d!).timed_out], [0, 'timeout', true]);
    assert.equal(e!.reward?.reward, null);
    assert.match(e!.reward!.reward_error!, /reward\.txt but it is not a number: "maybe\\n"/);
  });

  it('a failing setup is an infrastructure fault carrying the end of its output, not a 0 for the agent', async (t) => {
    const root = temporaryDirectory(t);
    const task = writeTask(root, 'broken-setup', {
      'environment/setup.sh': 'echo preparing\necho "the fixture is missing" >&2\nexit 7\n',
    });
    const outcome = await rollout(task, 'oracle');
    assert.equal(outcome.error?.code, 'task_setup_failed');
    assert.match(
      outcome.error!.message,
      /environment\/setup\.sh exited with 7; last output:\npreparing\nthe fixture is missing/,
    );
    assert.equal(outcome.reward, undefined);
  });

  it('a task without a reference solution makes the oracle fail loudly', async (t) => {
    const root = temporaryDirectory(t);
    const outcome = await rollout(writeTask(root, 'no-solution', {}), 'oracle');
    assert.equal(outcome.error?.code, 'oracle_missing');
    assert.match(outcome.error!.message, /no solution\/solve\.sh/);
  });
});
