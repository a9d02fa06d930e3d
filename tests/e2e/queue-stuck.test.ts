import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { temporaryDirectory, type CliResult } from '../helpers/cli.js';
import { redisKeys } from '../helpers/redis.js';
import { prompts, readRecords, writeJsonl } from '../helpers/batch-run.js';
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
 * A queued run must never wait forever where nothing can happen (issue 37): when every worker
 * refuses the run it fails fast and says why, and a signal stops the coordinator even when the
 * worker holding its jobs is gone.
 */

function attemptsUsed(directory: string, run: string): number {
  return (
    storeRows(directory, run, `SELECT COUNT(*) AS n FROM items WHERE attempts > 0 OR status = 'failed'`) as {
      n: number;
    }[]
  )[0]!.n;
}

async function activeJobs(url: string, run: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await client.llen(`bull:traj-run-${run}:active`);
  } finally {
    client.disconnect();
  }
}

test('a run every worker refuses fails fast with exit 4, naming each worker and why; nothing used an attempt; the rerun with a matching worker lands it', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const redis = await redisFor(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(6));
  const refusing = startWorker(t, directory, redis.url, ['--sandbox', 'docker']);
  const args = batchArgs(dataset, 'untaken', server.url, redis.url);

  // Before the fix this waited forever ("in flight 6"); the guard turns that hang into a failure.
  const refused = await coordinator(directory, args, 120_000).done;
  assert.equal(refused.signal, null, `the coordinator hung until killed:\n${refused.stderr}`);
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(
    refused.stderr,
    /run-level fault queue_refused: no traj worker will take run 'untaken': worker \S+ refused it: sandbox differs: the run uses local, this worker was started with --sandbox docker/,
  );
  assert.match(refused.stderr, /start a `traj worker` that matches/);
  assert.equal(server.requestCount(), 0, 'no rollout ran');
  assert.equal(attemptsUsed(directory, 'untaken'), 0, 'no prompt used an attempt');
  assert.ok(
    !(await redisKeys(redis.url)).includes('bull:traj-run-untaken:wait'),
    'its waiting jobs left the queue: no worker runs them behind the user’s back',
  );

  refusing.child.kill('SIGTERM');
  await refusing.done;
  startWorker(t, directory, redis.url);
  const rerun = await coordinator(directory, args).done;
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.equal(readRecords(directory, 'untaken').length, 6);
});

/** A run whose only worker dies with jobs in flight; then the coordinator gets `signals`. */
async function stopWithDeadWorker(t: TestContext, run: string, signals: NodeJS.Signals[]): Promise<void> {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 1000 });
  t.after(() => server.close());
  const redis = await redisFor(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(24));
  const worker = startWorker(t, directory, redis.url);
  const args = batchArgs(dataset, run, server.url, redis.url);
  const started = coordinator(directory, args);
  await waitFor('results landing', () => doneCount(directory, run) >= 4);
  worker.child.kill('SIGKILL');
  await worker.done;
  assert.ok((await activeJobs(redis.url, run)) > 0, 'the dead worker left jobs active');
  await sleep(1000);
  for (const signal of signals) {
    started.child.kill(signal);
    await sleep(500);
  }
  // Before the fix the coordinator waited for the dead worker's answers forever.
  const guard = setTimeout(() => started.child.kill('SIGKILL'), 60_000);
  const stopped: CliResult = await started.done;
  clearTimeout(guard);
  assert.equal(stopped.signal, null, `the coordinator ignored ${signals.join(' + ')}:\n${stopped.stderr}`);
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /interrupted: \d+ rollouts went back to pending\. Resume with the same command\./);
  const landed = doneCount(directory, run);
  assert.ok(landed >= 4 && landed < 24, `landed before the stop: ${landed}`);
  assert.equal(readRecords(directory, run).length, landed, 'completed work is saved in the outputs');
  assert.equal(attemptsUsed(directory, run), 0, 'the cut-off rollouts used no attempt');

  startWorker(t, directory, redis.url);
  const rerun = await coordinator(directory, args).done;
  assert.equal(rerun.code, 0, rerun.stderr);
  const records = readRecords(directory, run);
  assert.equal(records.length, 24);
  assert.equal(new Set(records.map((record) => record.id)).size, 24, 'each prompt landed once');
}

test('SIGTERM stops a coordinator whose only worker died holding its jobs: exit 130, landed work saved, the rerun finishes', (t) =>
  stopWithDeadWorker(t, 'orphaned-term', ['SIGTERM']));

test('two Ctrl-Cs stop a coordinator whose only worker died holding its jobs', (t) =>
  stopWithDeadWorker(t, 'orphaned-int', ['SIGINT', 'SIGINT']));
