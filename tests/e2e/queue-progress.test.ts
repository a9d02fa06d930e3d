import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { prompts, readRecords, writeJsonl } from '../helpers/batch-run.js';
import { batchArgs, coordinator, redisFor, startWorker } from '../helpers/queue.js';

test('the progress line of a queued run shows the model requests its workers have in flight and their concurrency, not "? … conc ?"', async (t) => {
  const directory = temporaryDirectory(t);
  // One model call per rollout (file tools only: the echo script answers at once), each 1.5 s: with
  // 4 rollouts at a time the run lasts past the first 10-second progress line.
  const server = await startScriptedServer(echoScript, { latencyMs: 1500 });
  t.after(() => server.close());
  const redis = await redisFor(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(40));
  startWorker(t, directory, redis.url);
  const result = await coordinator(directory, batchArgs(dataset, 'watched', server.url, redis.url)).done;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readRecords(directory, 'watched').length, 40);
  const lines = result.stderr.split('\n').filter((line) => / finished \(done /.test(line));
  assert.ok(lines.length >= 2, `a line while running and one at the end:\n${result.stderr}`);
  for (const line of lines) assert.doesNotMatch(line, /\?/, line);
  const running = lines
    .map((line) => /in flight (\d+) rollouts, (\d+) model requests, conc (\d+)\/(\d+)/.exec(line))
    .filter((match) => match !== null);
  assert.equal(running.length, lines.length, lines.join('\n'));
  assert.ok(
    running.some((match) => Number(match[2]) > 0 && Number(match[2]) <= 4),
    `a line while running shows the worker's requests in flight (at most its --concurrency 4):\n${lines.join('\n')}`,
  );
  // The worker's gate: `--concurrency 4` caps it.
  assert.ok(
    running.every((match) => Number(match[4]) === 4 && Number(match[3]) <= 4),
    lines.join('\n'),
  );
});
