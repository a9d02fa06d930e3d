import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker, type QueueEvents } from 'bullmq';
import { QueueCoordinator, type QueuedTask } from '../../src/queue/coordinator.js';
import { queueNameFor } from '../../src/queue/run-channel.js';
import type { RolloutOutcome, RolloutTask } from '../../src/run/rollout.js';
import { RunStore } from '../../src/run/store.js';
import { startRedis } from '../helpers/redis.js';
import { queuedRunSettings } from '../helpers/queue.js';

const settings = queuedRunSettings('landing');

const TOOL = { type: 'function', function: { name: 'terminal', description: 'run', parameters: {} } } as const;

function task(key: string): RolloutTask {
  return { key, sample: 0, toolsets: ['terminal'], messages: [{ role: 'user', content: key }], settings };
}

/** What a worker would return for a job: the task's key, an answer, the tools it offered. */
function outcomeFor(data: QueuedTask): RolloutOutcome {
  return {
    key: data.key,
    sample: data.sample,
    result: {
      messages: [...data.messages, { role: 'assistant', content: `answer to ${data.key}` }],
      finishReason: 'stop',
      turns: 1,
      apiCalls: 1,
      toolCalls: [],
      usage: { prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: 0 },
      timings: { started_at: new Date().toISOString(), duration_ms: 1, model_ms: 1, tool_ms: 0 },
    },
    tools: [TOOL],
    toolsKey: 'terminal',
    interrupted: false,
  } as unknown as RolloutOutcome;
}

test('a queued rollout settles from its completed event, or from the 2 s sweep when that event went by unseen; outcomes share one tool-spec array', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'traj-coordinator-landing-'));
  const redis = await startRedis();
  const store = RunStore.open(join(folder, 'landing.sqlite'));
  const coordinator = await QueueCoordinator.open({
    url: redis.url,
    store,
    settings,
    fingerprint: 'f',
    maxAttempts: 1,
  });
  const worker = new Worker<QueuedTask, RolloutOutcome>(queueNameFor('landing'), async (job) => outcomeFor(job.data), {
    connection: { host: '127.0.0.1', port: redis.port },
  });
  t.after(async () => {
    await worker.close();
    await coordinator.close(true);
    store.close();
    await redis.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  const heard = await Promise.all(['a', 'b', 'c'].map((key) => coordinator.run(task(key))));
  assert.deepEqual(
    heard.map((outcome) => outcome.result.messages.at(-1)?.content),
    ['answer to a', 'answer to b', 'answer to c'],
  );
  assert.ok(
    heard.every((outcome) => outcome.tools === heard[0]!.tools),
    'outcomes of one tool set share one tool-spec array (the record memo keys on it)',
  );

  // Deaf to completed events (as when they were trimmed from the stream before it read them): only
  // the periodic sweep of finish stamps can land these.
  (coordinator as unknown as { events: QueueEvents }).events.removeAllListeners('completed');
  const swept = await Promise.race([
    Promise.all(['d', 'e'].map((key) => coordinator.run(task(key)))),
    new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 60_000).unref()),
  ]);
  assert.notEqual(swept, 'timeout', 'the sweep landed jobs whose completed event was never heard');
  assert.deepEqual(
    (swept as RolloutOutcome[]).map((outcome) => outcome.result.messages.at(-1)?.content),
    ['answer to d', 'answer to e'],
  );
  assert.equal((swept as RolloutOutcome[])[0]!.tools, heard[0]!.tools);
});
