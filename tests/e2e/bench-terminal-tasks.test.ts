import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultTasksDirectory } from '../../environments/terminal-tasks/index.js';
import type { VerifierDetails } from '../../environments/terminal-tasks/verifier.js';
import type { ReferenceCheck } from '../../src/report/reference-check.js';
import type { EvalReport } from '../../src/report/report-schema.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { callTool, conversationScript, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { dockerSuiteOptions } from '../helpers/docker.js';
import { readRecords } from '../helpers/batch-run.js';

/**
 * `traj bench` on the real dev split in real containers: the oracle must solve every task and
 * doing nothing must solve none (the suite's own validity), and a scripted model is scored by
 * the tests that arrive only after it finished.
 */
const DEV = defaultTasksDirectory();
const options = await dockerSuiteOptions();
const devOptions = options.skip
  ? options
  : existsSync(DEV)
    ? {}
    : { skip: `skipped: ${DEV} is absent (../shared beside the checkout)` };

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

async function containersOf(run: string): Promise<number> {
  const docker = await connectDocker();
  return (await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`traj.run=${run}`] }) })).length;
}

describe('traj bench terminal-tasks on the dev split (Docker)', devOptions, () => {
  const taskNames = existsSync(DEV)
    ? Object.keys(readJson<{ tasks: Record<string, unknown> }>(join(DEV, 'MANIFEST.json')).tasks).sort()
    : [];

  for (const [agent, expected] of [
    ['oracle', 1],
    ['noop', 0],
  ] as const) {
    it(`--agent ${agent} scores ${expected}.0 on every dev task and validates the suite`, async (t) => {
      const directory = temporaryDirectory(t);
      const run = `bench-dev-${agent}-${process.pid}`;
      const result = await runCli(
        // `npm test` runs two test files at once, so "alone" still shares the machine: one
        // re-run of cross-entropy-method's speedup test lost to a busy CI machine twice in a row.
        [
          'bench',
          'terminal-tasks',
          '--tasks',
          DEV,
          '--agent',
          agent,
          '--run',
          run,
          '--concurrency',
          '4',
          '--recheck',
          '3',
        ],
        { cwd: directory },
      );
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      const report = readJson<EvalReport>(join(directory, 'datasets', run, 'report.json'));
      assert.deepEqual(report.items.map((item) => item.key).sort(), taskNames);
      const check = readJson<ReferenceCheck>(join(directory, 'datasets', run, 'validation.json'));
      assert.deepEqual([check.agent, check.checked, check.broken], [agent, taskNames.length, []]);
      // A timing-sensitive test (cross-entropy-method measures a speedup) can lose to a loaded
      // machine; bench runs such an item again alone and calls it flaky. Its verdict still counts.
      const flaky = new Set(check.flaky.map((item) => item.key));
      if (flaky.size > 0) t.diagnostic(`flaky under load, ${expected} when run again alone: ${[...flaky].join(', ')}`);
      for (const item of report.items) {
        if (!flaky.has(item.key))
          assert.equal(
            item.reward,
            expected,
            `${item.key}: ${item.reward_error ?? JSON.stringify(item.details).slice(0, 400)}`,
          );
      }
      assert.equal(report.summary.failed, 0);
      assert.match(
        result.stdout,
        new RegExp(
          `validation \\(${agent} agent\\): (all ${taskNames.length}|${taskNames.length - flaky.size} of ${taskNames.length}) rollouts scored ${expected}\\.0 as they must`,
        ),
      );
      assert.ok(existsSync(join(directory, 'datasets', run, 'report.html')));
      const records = readRecords(directory, run);
      if (agent === 'oracle') {
        for (const record of records) {
          const call = record.messages.find((message) => message.role === 'assistant' && message.tool_calls?.length);
          assert.ok(call && call.role === 'assistant');
          assert.equal(JSON.parse(call.tool_calls![0]!.function.arguments).command, 'bash /solution/solve.sh');
          assert.deepEqual(
            record.tool_stats.map((stat) => stat.name),
            ['terminal'],
          );
        }
      } else {
        for (const record of records)
          assert.ok((record.reward_details as VerifierDetails).failed_tests.length > 0, record.id);
      }
      assert.equal(await containersOf(run), 0, 'every container was removed');
    });
  }
});

describe('traj bench in containers: the demo suite and scripted models (Docker)', options, () => {
  it('the shipped demo tasks validate in traj-sandbox:bookworm: oracle 1.0 on each', async (t) => {
    const directory = temporaryDirectory(t);
    const run = `bench-demo-docker-${process.pid}`;
    const result = await runCli(['bench', 'demo', '--agent', 'oracle', '--run', run], { cwd: directory });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const report = readJson<EvalReport>(join(directory, 'datasets', run, 'report.json'));
    assert.deepEqual(report.items.map((item) => [item.key, item.reward]).sort(), [
      ['count-log-errors', 1],
      ['create-greeting-file', 1],
      ['fix-broken-script', 1],
    ]);
    assert.equal(await containersOf(run), 0);
  });

  it('a model that solves a task with tool calls earns 1.0; one that plants a conftest.py in /tests cannot pass', async (t) => {
    if (!existsSync(DEV)) return t.skip(`skipped: ${DEV} is absent (../shared beside the checkout)`);
    const directory = temporaryDirectory(t);
    // Two copies of the shared hello-world task (in a temp folder, never in the repo): one solved honestly, one cheated on.
    const tasks = join(directory, 'tasks');
    cpSync(join(DEV, 'hello-world'), join(tasks, 'hello-world'), { recursive: true });
    cpSync(join(DEV, 'hello-world'), join(tasks, 'hello-world-cheat'), { recursive: true });
    const toml = join(tasks, 'hello-world-cheat', 'task.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace('name = "hello-world"', 'name = "hello-world-cheat"'));
    writeFileSync(
      join(tasks, 'hello-world-cheat', 'instruction.md'),
      `${readFileSync(join(tasks, 'hello-world', 'instruction.md'), 'utf8')}\n(cheat copy)\n`,
    );
    const conftest = [
      'import pytest',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    outcome = yield',
      '    outcome.get_result().outcome = "passed"',
    ].join('\n');
    const cheat = `mkdir -p /tests /logs/verifier && cat > /tests/conftest.py <<'EOF'\n${conftest}\nEOF\necho 1 > /logs/verifier/reward.txt && ls /tests`;
    const honest = conversationScript([
      callTool('terminal', { command: "echo 'Hello, world!' > hello.txt && cat hello.txt" }),
      reply('Wrote hello.txt.'),
    ]);
    const cheater = conversationScript([callTool('terminal', { command: cheat }), reply('The tests pass now.')]);
    const isCheat = (request: ChatRequest) =>
      request.messages.some((message) => message.role === 'user' && String(message.content).includes('(cheat copy)'));
    const server = await startScriptedServer((request, context) =>
      (isCheat(request) ? cheater : honest)(request, context),
    );
    t.after(() => server.close());
    const run = `bench-model-${process.pid}`;
    const result = await runCli(
      [
        'bench',
        'terminal-tasks',
        '--tasks',
        tasks,
        '--run',
        run,
        '--base-url',
        server.url,
        '--model',
        'scripted',
        '--api-key-env',
        'NO_KEY',
      ],
      { cwd: directory },
    );
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const records = new Map(readRecords(directory, run).map((record) => [record.id, record]));
    assert.equal(records.get('hello-world')?.reward, 1, JSON.stringify(records.get('hello-world')?.reward_details));
    const cheated = records.get('hello-world-cheat')!;
    const planted = JSON.parse(cheated.messages.find((message) => message.role === 'tool')!.content as string) as {
      exit_code: number;
      output: string;
    };
    assert.deepEqual([planted.exit_code, planted.output.trim()], [0, 'conftest.py'], 'the cheat itself went through');
    assert.equal(cheated.reward, 0, JSON.stringify(cheated.reward_details));
    assert.deepEqual((cheated.reward_details as VerifierDetails).failed_tests, [
      'test_outputs.py::test_hello_file_exists',
      'test_outputs.py::test_hello_file_content',
    ]);
    assert.equal(server.requests.length, 4);
    assert.equal(await containersOf(run), 0);
  });
});
