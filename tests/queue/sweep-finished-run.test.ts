import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { bullConnection, parseQueueUrl } from '../../src/queue/connection.js';
import { queueNameFor, RUNS_KEY, sweepFinishedRun } from '../../src/queue/run-channel.js';
import { startRedis } from '../helpers/redis.js';

/**
 * A finished run leaves nothing in Redis, even when a worker's stalled-job check runs after the
 * coordinator removed the run: BullMQ writes the queue's meta hash back whenever it is missing.
 */
test("a stalled-job check after the run's removal writes the meta hash back; the leaving worker's sweep deletes it, unless the run is announced again", async (t) => {
  const redisServer = await startRedis();
  t.after(() => redisServer.stop());
  const redis = new Redis(redisServer.url);
  t.after(() => redis.disconnect());
  const connection = bullConnection(parseQueueUrl(redisServer.url));
  const run = 'swept';
  const worker = new Worker(queueNameFor(run), async () => undefined, { connection, stalledInterval: 100 });
  t.after(() => worker.close(true));
  await worker.waitUntilReady();
  await redis.sadd(RUNS_KEY, run);

  // The coordinator's removal: out of the run set, the queue obliterated.
  await redis.srem(RUNS_KEY, run);
  const queue = new Queue(queueNameFor(run), { connection, skipMetasUpdate: true });
  await queue.obliterate({ force: true });
  await queue.close();
  for (let tries = 0; tries < 100 && !(await redis.exists(worker.keys.meta)); tries++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await redis.exists(worker.keys.meta), 1, "the worker's stalled-job check wrote the meta hash back");

  await worker.close(true);
  const swept = [worker.keys.meta, worker.keys['stalled-check']];
  await redis.sadd(RUNS_KEY, run);
  await sweepFinishedRun(redis, run, swept);
  assert.equal(await redis.exists(worker.keys.meta), 1, 'a run announced again keeps its queue');
  await redis.srem(RUNS_KEY, run);
  await sweepFinishedRun(redis, run, swept);
  assert.deepEqual(
    (await redis.keys('*')).filter((key) => key.includes(run)),
    [],
    'nothing of the finished run is left',
  );
});
