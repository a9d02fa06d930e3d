import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, reply, startScriptedServer } from '../../src/testing/index.js';
import { startCli, temporaryDirectory, type CliResult } from '../helpers/cli.js';
import { redisKeys, startRedis } from '../helpers/redis.js';
import { readRecords, writeJsonl } from '../helpers/batch-run.js';
import {
  batchArgs,
  coordinator,
  doneCount,
  redisFor,
  sleep,
  startWorker,
  storeRows,
  waitFor,
} from '../helpers/queue.js';

/**
 * Distributed runs over a real redis-server (issue 20): a coordinator (`traj batch --queue`) and
 * `traj worker` processes. Landing is exactly once by key, whatever gets killed.
 */

const prompts = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ prompt: `queued task ${index}: say hello` }));

function assertLandedOnce(directory: string, run: string, total: number, duplicates: number): void {
  const records = readRecords(directory, run);
  assert.equal(records.length, total);
  assert.equal(new Set(records.map((record) => record.id)).size, total, 'one record per prompt key');
  assert.equal(
    records.filter((record) => /#[1-9]$/.test(record.id)).length,
    duplicates,
    'duplicate prompts are their own prompts (occurrence #1)',
  );
  assert.deepEqual(
    storeRows(directory, run, 'SELECT status, COUNT(*) AS n, MAX(attempts) AS attempts FROM items GROUP BY status'),
    [{ status: 'done', n: total, attempts: 0 }],
  );
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', run, 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.total, total);
  assert.equal(stats.prompts.done, total);
  assert.equal(stats.prompts.failed, 0);
}

test('three workers, one SIGKILLed mid-run, then the coordinator SIGKILLed and restarted: 300 prompts (30 duplicates) land exactly once', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 300 });
  t.after(() => server.close());
  const redis = await redisFor(t);
  const dataset = join(directory, 'prompts.jsonl');
  const rows = prompts(270);
  writeJsonl(dataset, [...rows, ...rows.slice(0, 30)]);
  const workers = [0, 1, 2].map(() => startWorker(t, directory, redis.url));
  // --max-attempts 1: a job cut off by a killed worker must stall and rerun, never count as a failure.
  const args = batchArgs(dataset, 'spread', server.url, redis.url, ['--max-attempts', '1']);

  const first = coordinator(directory, args);
  await waitFor('results landing', () => doneCount(directory, 'spread') >= 30);
  workers[0]!.child.kill('SIGKILL');
  const atWorkerKill = doneCount(directory, 'spread');
  await waitFor('results landing after the worker kill', () => doneCount(directory, 'spread') >= atWorkerKill + 40);
  first.child.kill('SIGKILL');
  const killed = await first.done;
  assert.equal(killed.signal, 'SIGKILL', `the coordinator finished before it could be killed:\n${killed.stderr}`);
  const atCoordinatorKill = doneCount(directory, 'spread');
  assert.ok(atCoordinatorKill < 300, `the coordinator was killed mid-run (${atCoordinatorKill} done)`);
  // The surviving workers keep running what was queued; its results wait in Redis for the coordinator.
  await sleep(1500);

  const second: CliResult = await coordinator(directory, args).done;
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /wrote 300 trajectories/);
  assertLandedOnce(directory, 'spread', 300, 30);
  // At-least-once execution, exactly-once landing: the only rollouts run twice are the ones the killed
  // worker had in flight (4 at most) — nothing landed, nor finished while the coordinator was gone, ran again.
  const completions = server.requestCount();
  assert.ok(
    completions >= 300 && completions <= 304,
    `model requests: ${completions} (300 prompts + at most 4 cut off by the worker kill)`,
  );
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'spread', 'statistics.json'), 'utf8'));
  assert.equal(stats.segments, 2);
  // A finished run leaves nothing in Redis: no jobs, no settings. Not at once: a surviving worker
  // notices the run is gone at its next poll (1 s), and then deletes the queue's meta hash that its
  // stalled-job check may have written back meanwhile (sweep-finished-run.test.ts); a busy machine
  // (CI) stretches the wait.
  let left: string[] = [];
  await waitFor(
    'the run to leave Redis',
    async () => {
      left = (await redisKeys(redis.url)).filter((key) => key.includes('spread'));
      return left.length === 0;
    },
    30_000,
  ).catch((error: Error) => assert.fail(`${error.message}; left: ${left.join(', ')}`));
});

test('an eval over the queue: rewards computed on the workers from their sandboxes, a judge panel, the report as on one machine', async (t) => {
  const directory = temporaryDirectory(t);
  const redis = await redisFor(t);
  const policy = await startScriptedServer((request) => {
    const task = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
    return reply(`My answer to: ${task}`);
  });
  const grades: Record<string, [number, boolean]> = {
    'judge-a': [9, true],
    'judge-b': [8, true],
    'judge-c': [3, false],
  };
  const judges = await startScriptedServer((request) => {
    const [score, pass] = grades[request.model!]!;
    return reply(JSON.stringify({ reasoning: `${request.model}: graded against the rubric`, score, pass }));
  });
  t.after(() => Promise.all([policy.close(), judges.close()]).then(() => undefined));
  startWorker(t, directory, redis.url);
  startWorker(t, directory, redis.url);
  const args = [
    'eval',
    '--env',
    'rubric',
    '--run',
    'panel',
    '--concurrency',
    '8',
    '--base-url',
    policy.url,
    '--model',
    'policy',
    '--api-key-env',
    'NO_KEY',
    '--judge-model',
    'judge-a,judge-b,judge-c',
    '--judge-base-url',
    judges.url,
    '--judge-api-key-env',
    'NO_KEY',
    '--queue',
    redis.url,
  ];
  const result = await coordinator(directory, args).done;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(policy.requestCount(), 4, '4 items, each run once');
  assert.equal(judges.requestCount(), 12, 'each rollout graded by the 3 judges, on the workers');
  const records = readRecords(directory, 'panel');
  assert.equal(records.length, 4);
  for (const record of records) {
    assert.ok(Math.abs(record.reward! - 2 / 3) < 1e-12, 'two of three judges pass');
    assert.ok(Math.abs(record.scores.judge_agreement! - 2 / 3) < 1e-12);
    const details = record.reward_details as { judges: { model: string }[] };
    assert.deepEqual(
      details.judges.map((judge) => judge.model),
      ['judge-a', 'judge-b', 'judge-c'],
    );
  }
  const report = JSON.parse(readFileSync(join(directory, 'datasets', 'panel', 'report.json'), 'utf8'));
  assert.equal(report.summary.items, 4);
  assert.equal(report.summary.judged, 4);
  assert.match(result.stdout, /judge agreement: 0\.667 over 4/);
  // The verdicts came back with the results and were cached by the coordinator: --rescore asks no judge again.
  const rescored = await startCli(['eval', '--rescore', 'panel'], { cwd: directory }).done;
  assert.equal(rescored.code, 0, rescored.stderr);
  assert.equal(judges.requestCount(), 12);
});

test('Redis restarted without persistence: the coordinator stops with how to resume (exit 4); the rerun lands the rest exactly once', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 300 });
  t.after(() => server.close());
  let redis = await startRedis();
  t.after(() => redis.stop());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(60));
  startWorker(t, directory, redis.url);
  const args = batchArgs(dataset, 'volatile', server.url, redis.url);
  const first = coordinator(directory, args);
  await waitFor('results landing', () => doneCount(directory, 'volatile') >= 8);
  await redis.stop('SIGKILL');
  redis = await startRedis({ port: redis.port });
  const lost = await first.done;
  assert.equal(lost.code, 4, lost.stderr);
  assert.match(lost.stderr, /lost run 'volatile' \(restarted without persistence\?\)[\s\S]*rerun the same command/);
  assert.equal(
    (
      storeRows(directory, 'volatile', `SELECT COUNT(*) AS n FROM items WHERE attempts > 0 OR status = 'failed'`) as {
        n: number;
      }[]
    )[0]!.n,
    0,
    'no prompt used an attempt',
  );
  const rerun = await coordinator(directory, args).done;
  assert.equal(rerun.code, 0, rerun.stderr);
  assertLandedOnce(directory, 'volatile', 60, 0);
});

test('Redis restarted with persistence (append-only file): the run continues and every prompt lands once', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 300 });
  t.after(() => server.close());
  const data = temporaryDirectory(t, 'traj-redis-');
  let redis = await startRedis({ persistence: data });
  t.after(() => redis.stop());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(60));
  startWorker(t, directory, redis.url);
  const args = batchArgs(dataset, 'durable', server.url, redis.url);
  const run = coordinator(directory, args);
  await waitFor('results landing', () => doneCount(directory, 'durable') >= 8);
  await redis.stop('SIGKILL');
  await sleep(500);
  redis = await startRedis({ port: redis.port, persistence: data });
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);
  assertLandedOnce(directory, 'durable', 60, 0);
});

test('--stop drains a run: its jobs and settings leave Redis, the coordinator stops with why, landed results stay; a worker refuses a run it cannot serve', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 300 });
  t.after(() => server.close());
  const redis = await redisFor(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(80));
  startWorker(t, directory, redis.url);
  const refusing = startWorker(t, directory, redis.url, ['--sandbox', 'docker']);
  const args = batchArgs(dataset, 'drained', server.url, redis.url);
  const run = coordinator(directory, args);
  await waitFor('results landing', () => doneCount(directory, 'drained') >= 5);
  const stop = await coordinator(directory, [...args, '--stop']).done;
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stderr, /--stop: run 'drained' drained from redis:\/\/127\.0\.0\.1:\d+ \(\d+ jobs removed/);
  const stopped = await run.done;
  assert.equal(stopped.code, 4, stopped.stderr);
  assert.match(stopped.stderr, /run 'drained' was stopped with --stop/);
  // Only the tombstone stays (a day), so a coordinator still attached can tell a --stop from a lost Redis.
  await waitFor(
    'the run to leave Redis',
    async () =>
      (await redisKeys(redis.url)).filter((key) => key.includes('drained')).join() === 'traj:run:drained:stopped',
    10_000,
  );
  const landed = doneCount(directory, 'drained');
  assert.ok(landed >= 5 && landed < 80, `landed before the stop: ${landed}`);
  assert.equal(
    (storeRows(directory, 'drained', `SELECT COUNT(*) AS n FROM items WHERE attempts > 0`) as { n: number }[])[0]!.n,
    0,
  );
  refusing.child.kill('SIGTERM');
  const refused = await refusing.done;
  assert.match(
    refused.stderr,
    /refusing run 'drained': sandbox differs: the run uses local, this worker was started with --sandbox docker/,
  );
  assert.match(refused.stderr, /stopped after 0 rollouts/);
});
