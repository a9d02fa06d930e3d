import assert from 'node:assert/strict';
import { threadId } from 'node:worker_threads';
import { test } from 'node:test';
import { startLocalPool } from '../../src/run/pool.js';
import type { RolloutTask } from '../../src/run/rollout.js';
import { reply, startScriptedServer, type ScriptedResponse } from '../../src/testing/index.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

/**
 * A light run's rollouts on the main thread (InProcessRunner), against a real scripted server:
 * what a pool thread gives its rollouts must hold here too.
 */

function task(baseUrl: string, key: string, maxRetries = 0): RolloutTask {
  const settings = scriptedRolloutSettings(baseUrl, 'in-process');
  return {
    key,
    sample: 0,
    toolsets: ['file'],
    messages: [{ role: 'user', content: `prompt ${key}` }],
    settings: { ...settings, endpoint: { ...settings.endpoint, max_retries: maxRetries } },
  };
}

/** A script whose replies wait until `release()`; `arrived(n)` resolves once n requests are held. */
function heldScript() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    release,
    script: async (): Promise<ScriptedResponse> => {
      await released;
      return reply('done');
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 400 && !condition(); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), 'timed out waiting');
}

test('a light run runs its rollouts on this thread, under the endpoint gate, counting its requests', async (t) => {
  const held = heldScript();
  const server = await startScriptedServer(held.script);
  t.after(() => server.close());
  const endpoint = task(server.url, 'x').settings.endpoint;
  const { pool, choice } = startLocalPool({ concurrency: 12, endpoint, environment: false });
  t.after(() => pool.close());
  assert.equal(choice.workers, 0);
  assert.equal(pool.workers, 0);
  const outcomes = Promise.all(Array.from({ length: 12 }, (_, index) => pool.run(task(server.url, `k${index}`))));
  // endpoint.concurrency 8 caps the 12 rollouts' requests: the gate the progress line reads is the one applied.
  await until(() => server.inFlight() === 8);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(server.maxInFlight(), 8);
  assert.equal(pool.requestsInFlight(), 8);
  held.release();
  const landed = await outcomes;
  assert.deepEqual(
    landed.map((outcome) => outcome.result.finishReason),
    Array(12).fill('stop'),
  );
  assert.equal(pool.requestsInFlight(), 0);
  assert.ok(
    landed.every((outcome) => outcome.tools === landed[0]!.tools),
    'one tool-spec array for every outcome (the records memo keys on it)',
  );
  assert.deepEqual(
    landed[0]!.tools.map((tool) => tool.function.name),
    ['read_file', 'write_file', 'patch', 'search_files'],
  );
  assert.equal(threadId, 0, 'this test runs on the main thread, as the rollouts did');
});

test('interrupt ends the rollouts in flight on this thread as interrupted; close waits for their services', async (t) => {
  const held = heldScript();
  const server = await startScriptedServer(held.script);
  t.after(async () => {
    held.release();
    await server.close();
  });
  const endpoint = task(server.url, 'x').settings.endpoint;
  const { pool } = startLocalPool({ concurrency: 4, endpoint, environment: false });
  const outcomes = Promise.all([0, 1, 2].map((index) => pool.run(task(server.url, `i${index}`))));
  await until(() => server.inFlight() === 3);
  pool.interrupt();
  const landed = await outcomes;
  assert.deepEqual(
    landed.map((outcome) => outcome.interrupted),
    [true, true, true],
  );
  assert.equal(pool.isClosing, false);
  await pool.close();
  assert.equal(pool.isClosing, true);
});

test('a model call being retried on this thread is told to the run (progress shows what the server said)', async (t) => {
  let calls = 0;
  const server = await startScriptedServer(async () => {
    calls++;
    return calls === 1 ? { fault: 'http', status: 503, body: { error: { message: 'warming up' } } } : reply('done');
  });
  t.after(() => server.close());
  const endpoint = task(server.url, 'x').settings.endpoint;
  const { pool } = startLocalPool({ concurrency: 2, endpoint, environment: false });
  t.after(() => pool.close());
  const retries: string[] = [];
  pool.onRetry = (retry) => retries.push(retry.message);
  const outcome = await pool.run(task(server.url, 'r', 2));
  assert.equal(outcome.result.finishReason, 'stop');
  assert.equal(retries.length, 1);
  assert.match(retries[0]!, /^HTTP 503: .*warming up/);
});
