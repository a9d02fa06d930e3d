import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { toWireMessages } from '../../src/model/wire.js';
import type { EvalReport } from '../../src/report/report-schema.js';
import { startScriptedServer } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { buildRoot, projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { requireDockerOrSkip } from '../helpers/docker.js';
import { shellSolver, SOLVED } from '../helpers/shell-solver.js';

/**
 * A suite's `agent:` names the agent CLI `traj bench` runs (a definition file relative to the
 * suite); `--agent` overrides it.
 */
function suiteFolder(directory: string, lines: string[]): string {
  mkdirSync(join(directory, 'suites', 'agents'), { recursive: true });
  copyFileSync(join(projectRoot(), 'agents', 'qwen-code.yaml'), join(directory, 'suites', 'agents', 'qwen.yaml'));
  const file = join(directory, 'suites', 'with-agent.yaml');
  writeFileSync(file, `${['agent: agents/qwen.yaml', ...lines].join('\n')}\n`);
  return file;
}

test('a suite’s agent: is the one run (refused outside Docker), and --agent overrides it', async (t) => {
  const directory = temporaryDirectory(t);
  const suite = suiteFolder(directory, ['environment: file-task', 'sandbox: local']);
  const args = ['bench', suite, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--api-key-env', 'NO_KEY'];
  const env = { NO_KEY: 'unused' };
  const refused = await runCli(args, { cwd: directory, env });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /--agent qwen-code runs the agent CLI in a Docker container.*--sandbox local/);
  assert.equal(existsSync(join(directory, 'checkpoints')), false, 'nothing ran');

  const overridden = await runCli([...args, '--agent', 'noop', '--workers', '1'], { cwd: directory, env });
  assert.equal(overridden.code, 0, overridden.stderr);
  assert.ok(existsSync(join(directory, 'checkpoints', 'with-agent-noop.sqlite')), 'the noop agent ran');
});

test('traj bench SUITE with agent: FILE runs that agent CLI (the real Qwen Code) in Docker: reward 1.0, the record is the wire', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const environment = join(buildRoot(), 'tests', 'bridge', 'report-environment.js');
  const suite = suiteFolder(directory, [`environment: ${environment}`, 'sandbox: docker', 'max_turns: 8']);
  const server = await startScriptedServer(shellSolver('echo 100 > report.txt'));
  t.after(() => server.close());
  const result = await runCli(
    ['bench', suite, '--base-url', server.url, '--model', 'traj-scripted', '--api-key-env', 'NO_KEY'],
    { cwd: directory, env: { NO_KEY: 'unused' } },
  );
  assert.equal(result.code, 0, result.stderr);
  // The run is named after the definition, not its file.
  const outDir = join(directory, 'datasets', 'with-agent-qwen-code');
  const report = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')) as EvalReport;
  assert.equal(report.summary.mean_reward.value, 1);
  assert.equal(report.items[0]?.finish_reason, 'stop');
  const [record] = readFileSync(join(outDir, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  const last = server.requests.filter((request) => request.tools?.length).at(-1)!;
  assert.deepEqual(toWireMessages(record!.messages.slice(0, -1)), last.messages);
  assert.deepEqual(record!.messages.at(-1), { role: 'assistant', content: SOLVED });
});
