import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { toWireMessages } from '../../src/model/wire.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { scriptedBatchArgs, startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';
import { requireDockerOrSkip } from '../helpers/docker.js';
import { coordinator, redisFor, startWorker } from '../helpers/queue.js';
import { shellSolver, SOLVED } from '../helpers/shell-solver.js';

/**
 * `traj batch --agent qwen-code`: the real Qwen Code CLI (npm, in the agent image) is the policy of a
 * prompt batch. The record is its trajectory as its model saw and said it, its logs are artifacts,
 * and a batch killed mid-rollout resumes to exactly one record per prompt.
 */
const PROMPTS = ['Create a file report.txt whose first line is 100.', 'Write the number 100 into report.txt.'];

function writeDataset(directory: string): string {
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(dataset, `${PROMPTS.map((prompt) => JSON.stringify({ prompt })).join('\n')}\n`);
  return dataset;
}

function batchArgs(dataset: string, run: string, url: string, flags: string[] = []): string[] {
  return scriptedBatchArgs(dataset, run, url, 'NO_KEY', ['--agent', 'qwen-code', '--sandbox', 'docker', ...flags]);
}

async function leftovers(run: string): Promise<{ containers: number; networks: number }> {
  const docker = await connectDocker();
  const filters = JSON.stringify({ label: [`traj.run=${run}`] });
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters: { label: [`traj.run=${run}`] } });
  return { containers: containers.length, networks: networks.length };
}

function readRecords(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
}

/** The record's conversation is the last tool-bearing request the endpoint received for its prompt, plus the answer sent. */
function assertRecordIsTheWire(record: TrajectoryRecord, server: ScriptedServer): void {
  const prompt = PROMPTS.find((text) => JSON.stringify(record.messages).includes(text));
  assert.ok(prompt, 'the record holds its prompt');
  const sent = server.requests.filter(
    (request) => request.tools?.length && JSON.stringify(request.messages).includes(prompt),
  );
  const last = sent.at(-1)!;
  assert.deepEqual(toWireMessages(record.messages.slice(0, -1)), last.messages);
  assert.deepEqual(record.messages.at(-1), { role: 'assistant', content: SOLVED });
  assert.deepEqual(
    record.tools.map((tool) => tool.function.name),
    last.tools!.map((tool) => tool.function.name),
  );
  assert.equal(record.finish_reason, 'stop');
  assert.deepEqual(record.toolsets, []);
  assert.ok(record.messages[0]?.role === 'system' && /Qwen Code/.test(String(record.messages[0].content)));
  const names = record.artifacts.map((path) => path.replace(/^.*\/\d+-/, ''));
  assert.deepEqual(names, ['qwen-code-stdout.txt', 'qwen-code-stderr.txt', 'qwen-code-logs.tar.gz']);
  for (const path of record.artifacts) assert.ok(existsSync(path), `${path} is kept`);
}

test('traj batch --agent: the Docker sandbox is required, and settings of traj’s own agent are refused (exit 2, no store)', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = writeDataset(directory);
  const url = 'http://127.0.0.1:9/v1';
  writeFileSync(join(directory, 'run.yaml'), 'distribution: development\n');
  const cases: Array<[string[], RegExp[]]> = [
    [['--sandbox', 'local'], [/--agent qwen-code runs the agent CLI in a Docker container.*add --sandbox docker/]],
    [
      ['--sandbox', 'docker', '--config', 'run.yaml', '--prefill', 'x.json'],
      [/--agent qwen-code: --distribution, --prefill are for traj's own agent/],
    ],
    // Both mistakes at once: the default sandbox (local) and a toolset.
    [
      ['--toolsets', 'terminal'],
      [/add --sandbox docker/, /--toolsets is for traj's own agent; the agent CLI brings/],
    ],
  ];
  for (const [flags, expected] of cases) {
    const args = scriptedBatchArgs(dataset, 'refused', url, 'NO_KEY', ['--agent', 'qwen-code', ...flags]);
    const result = await runCli(args, { cwd: directory, env: { NO_KEY: 'unused' } });
    assert.equal(result.code, 2, result.stderr);
    for (const pattern of expected) assert.match(result.stderr, pattern);
  }
  const oracle = await runCli(scriptedBatchArgs(dataset, 'refused', url, 'NO_KEY', ['--agent', 'oracle']), {
    cwd: directory,
    env: { NO_KEY: 'unused' },
  });
  assert.equal(oracle.code, 2);
  assert.match(oracle.stderr, /traj batch --agent oracle: the reference agents check an environment's rewards/);
  assert.equal(existsSync(join(directory, 'checkpoints')), false, 'nothing ran');
});

test('traj eval --agent qwen-code outside Docker is refused before any rollout (exit 2, no store)', async (t) => {
  const directory = temporaryDirectory(t);
  const result = await runCli(
    ['eval', '--env', 'file-task', '--run', 'refused', '--agent', 'qwen-code', '--base-url', 'http://127.0.0.1:9/v1'],
    { cwd: directory, env: { OPENAI_API_KEY: 'unused' } },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--agent qwen-code runs the agent CLI in a Docker container.*--sandbox local/);
  assert.equal(existsSync(join(directory, 'checkpoints')), false, 'nothing ran');
});

test('traj batch --agent qwen-code: killed mid-rollout, the rerun ends with one record per prompt, each what the endpoint saw; a third run re-runs nothing', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const dataset = writeDataset(directory);
  // Slow answers keep the agents mid-rollout when the kill lands.
  const server = await startScriptedServer(shellSolver('echo 100 > report.txt'), { latencyMs: 1500 });
  t.after(() => server.close());
  const run = `batch-agent-${process.pid}`;
  const env = { NO_KEY: 'unused' };

  const { child, done } = startCli(batchArgs(dataset, run, server.url), { cwd: directory, env });
  for (let tries = 0; tries < 1200 && server.requests.length === 0; tries++)
    await new Promise((resolve) => setTimeout(resolve, 250));
  assert.ok(server.requests.length > 0, 'an agent called its model before the kill');
  child.kill('SIGKILL');
  await done;

  const rerun = await runCli(batchArgs(dataset, run, server.url), { cwd: directory, env });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.match(rerun.stderr, /agent qwen-code, model traj-scripted/);
  const records = readRecords(directory, run);
  assert.equal(records.length, 2);
  assert.equal(new Set(records.map((record) => record.id)).size, 2);
  for (const record of records) assertRecordIsTheWire(record, server);
  const db = new Database(join(directory, 'checkpoints', `${run}.sqlite`), { readonly: true });
  assert.deepEqual(db.prepare('SELECT status, COUNT(*) AS n FROM items GROUP BY status').all(), [
    { status: 'done', n: 2 },
  ]);
  db.close();
  assert.deepEqual(await leftovers(run), { containers: 0, networks: 0 });

  const requests = server.requests.length;
  const third = await runCli(batchArgs(dataset, run, server.url), { cwd: directory, env });
  assert.equal(third.code, 0, third.stderr);
  assert.match(third.stderr, /skipped 2/);
  assert.equal(server.requests.length, requests, 'no agent ran again');
  assert.equal(readRecords(directory, run).length, 2);

  // The definition is part of the run's fingerprint: another agent is another run.
  const other = await runCli(
    scriptedBatchArgs(dataset, run, server.url, 'NO_KEY', ['--agent', 'codex', '--sandbox', 'docker']),
    {
      cwd: directory,
      env,
    },
  );
  assert.equal(other.code, 2, other.stderr);
  assert.match(other.stderr, /agent: "cli:qwen-code" → "cli:codex"/);
  assert.equal(server.requests.length, requests);
});

test('traj batch --agent qwen-code --queue: a traj worker runs the agent CLI, and the record is what the endpoint saw', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const dataset = writeDataset(directory);
  const server = await startScriptedServer(shellSolver('echo 100 > report.txt'), { latencyMs: 50 });
  t.after(() => server.close());
  const redis = await redisFor(t);
  startWorker(t, directory, redis.url);
  const run = `queued-agent-${process.pid}`;
  const args = scriptedBatchArgs(dataset, run, server.url, 'TRAJ_TEST_KEY', [
    '--agent',
    'qwen-code',
    '--sandbox',
    'docker',
    '--queue',
    redis.url,
  ]);
  const result = await coordinator(directory, args).done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /agent qwen-code, model traj-scripted .*queued/);
  const records = readRecords(directory, run);
  assert.equal(records.length, 2);
  for (const record of records) assertRecordIsTheWire(record, server);
  // The worker sends a result before it removes the rollout's container and network, so the
  // coordinator can finish first; the worker still removes them.
  let left = await leftovers(run);
  for (let tries = 0; tries < 60 && (left.containers > 0 || left.networks > 0); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    left = await leftovers(run);
  }
  assert.deepEqual(left, { containers: 0, networks: 0 });
});
