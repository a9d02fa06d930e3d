import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunStatistics } from '../../src/run/run-statistics.js';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { prompts, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const LIMIT = 4;
const CAP = 16;
const PROMPTS = 80;

test('a batch against an endpoint that answers 429 past 4 in flight finishes every prompt, none failed', {
  timeout: 120_000,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 50, record: false, rateLimitAbove: LIMIT });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(PROMPTS, 'rate'));
  // Two threads: both follow the one gate the main thread owns, so the level is the run's, not a thread's.
  const flags = ['--toolsets', 'file', '--concurrency', String(CAP), '--workers', '2', '--max-turns', '1'];
  const result = await runCli(
    scriptedBatchArgs(dataset, 'limited', server.url, 'NO_KEY', [...flags, '--max-attempts', '1']),
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const stats = JSON.parse(
    readFileSync(join(directory, 'datasets', 'limited', 'statistics.json'), 'utf8'),
  ) as RunStatistics;
  assert.equal(stats.prompts.done, PROMPTS);
  assert.equal(stats.prompts.failed, 0, 'rate limiting never fails a prompt, even with --max-attempts 1');
  assert.ok(server.rateLimitedCount() > 0, 'the endpoint did refuse');
  assert.equal(stats.concurrency.http_429, server.rateLimitedCount(), 'every 429 counted, once');
  assert.equal(stats.concurrency.http_503, 0);
  const series = stats.concurrency.series;
  assert.ok(series.length >= 2, `a series of the level: ${JSON.stringify(series)}`);
  assert.deepEqual(series[0], [0, CAP], 'it starts at the cap');
  for (const [seconds, level] of series) {
    assert.ok(level >= 1 && level <= CAP, `level ${level} at ${seconds} s`);
    assert.ok(seconds >= 0 && seconds * 1000 <= stats.wall_time_ms + 1_000, `time ${seconds} s`);
  }
  assert.ok(Math.min(...series.map(([, level]) => level)) <= LIMIT + 1, 'it came down to what the endpoint takes');
  assert.match(result.stderr, /requests in flight adaptive within \[1, 16\]/);
  assert.match(result.stderr, /conc \d+\/16/, 'the progress line shows the level');
});

test('endpoint.adaptive: false keeps a fixed cap; the 429s are still counted and retried', {
  timeout: 120_000,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 20, record: false, rateLimitAbove: LIMIT });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(20, 'fixed'));
  writeFileSync(join(directory, 'run.yaml'), 'endpoint:\n  adaptive: false\n  concurrency: 6\n');
  const flags = ['--config', join(directory, 'run.yaml'), '--toolsets', 'file', '--concurrency', '8'];
  const result = await runCli(
    scriptedBatchArgs(dataset, 'fixed', server.url, 'NO_KEY', [...flags, '--max-turns', '1']),
    {
      cwd: directory,
    },
  );
  assert.equal(result.code, 0, result.stderr);
  const stats = JSON.parse(
    readFileSync(join(directory, 'datasets', 'fixed', 'statistics.json'), 'utf8'),
  ) as RunStatistics;
  assert.equal(stats.prompts.done, 20);
  assert.equal(stats.concurrency.http_429, server.rateLimitedCount());
  assert.deepEqual([...new Set(stats.concurrency.series.map(([, level]) => level))], [6], 'never moved off the cap');
  assert.match(result.stderr, /capped at 6 by endpoint\.concurrency 6.*fixed \(endpoint\.adaptive: false\)/);
});

test('an unknown endpoint key next to adaptive is refused, naming it', { timeout: 60_000 }, async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(1));
  writeFileSync(join(directory, 'run.yaml'), 'endpoint:\n  adaptive: true\n  min_concurency: 2\n');
  const result = await runCli(
    scriptedBatchArgs(dataset, 'typo', 'http://127.0.0.1:9/v1', 'NO_KEY', ['--config', join(directory, 'run.yaml')]),
    { cwd: directory },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /min_concurency/);
});

test('one gate for all threads: a cap of 5 over 2 worker threads is 5 in flight, exactly', {
  timeout: 120_000,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 200, record: false });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(30, 'shared'));
  writeFileSync(join(directory, 'run.yaml'), 'endpoint:\n  concurrency: 5\n');
  const flags = ['--config', join(directory, 'run.yaml'), '--toolsets', 'file', '--concurrency', '20'];
  const result = await runCli(
    scriptedBatchArgs(dataset, 'shared', server.url, 'NO_KEY', [...flags, '--workers', '2', '--max-turns', '1']),
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /2 worker threads/);
  // Per-thread shares would give floor(5 / 2) × 2 = 4; one shared gate uses the whole cap and no more.
  assert.equal(server.maxInFlight(), 5);
});
