import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseWorkerCount, IN_PROCESS_ROLLOUTS, ROLLOUTS_PER_IO_THREAD } from '../../src/run/worker-count.js';

test("a plain batch of up to one thread's rollouts in flight runs them on the main thread, and says why", () => {
  const light = chooseWorkerCount({ concurrency: 32, environment: false, cores: 2 });
  assert.equal(light.workers, 0);
  assert.match(light.reason, /at most 1024 rollouts in flight/);
  assert.equal(IN_PROCESS_ROLLOUTS, ROLLOUTS_PER_IO_THREAD, 'when one thread is enough, it is the main thread');
  assert.equal(chooseWorkerCount({ concurrency: 1000, environment: false, cores: 2 }).workers, 0);
  assert.equal(chooseWorkerCount({ concurrency: IN_PROCESS_ROLLOUTS, environment: false, cores: 8 }).workers, 0);
  assert.equal(chooseWorkerCount({ concurrency: 1000, environment: false, cores: 1 }).workers, 0);
  assert.equal(chooseWorkerCount({ concurrency: 1, environment: true, cores: 2 }).workers, 1, 'environments: threads');
});

test('a plain batch gets threads once its rollouts in flight outgrow one thread', () => {
  assert.equal(chooseWorkerCount({ concurrency: IN_PROCESS_ROLLOUTS + 1, environment: false, cores: 8 }).workers, 2);
  assert.equal(chooseWorkerCount({ concurrency: 2 * ROLLOUTS_PER_IO_THREAD, environment: false, cores: 8 }).workers, 2);
  assert.equal(
    chooseWorkerCount({ concurrency: 2 * ROLLOUTS_PER_IO_THREAD + 1, environment: false, cores: 8 }).workers,
    3,
  );
  assert.equal(chooseWorkerCount({ concurrency: 2000, environment: false, cores: 2 }).workers, 2);
  assert.equal(
    chooseWorkerCount({ concurrency: 100_000, environment: false, cores: 4 }).workers,
    4,
    'never more than the cores',
  );
  assert.equal(chooseWorkerCount({ concurrency: 2000, environment: false, cores: 1 }).workers, 1);
});

test('an environment run spreads over the cores, but never past its rollouts in flight', () => {
  assert.equal(chooseWorkerCount({ concurrency: 32, environment: true, cores: 4 }).workers, 4);
  assert.equal(chooseWorkerCount({ concurrency: 3, environment: true, cores: 8 }).workers, 3);
  assert.match(chooseWorkerCount({ concurrency: 32, environment: true, cores: 4 }).reason, /environment/);
});

test('--workers is obeyed, bounded by the rollouts in flight and an explicit request cap', () => {
  const chosen = chooseWorkerCount({ requested: 6, concurrency: 32, environment: false, cores: 2 });
  assert.deepEqual(chosen, { workers: 6, reason: '--workers' });
  assert.equal(chooseWorkerCount({ requested: 6, concurrency: 4, environment: false, cores: 2 }).workers, 4);
  assert.equal(
    chooseWorkerCount({ requested: 6, concurrency: 32, environment: false, cores: 2, requestCap: 2 }).workers,
    2,
  );
  assert.deepEqual(chooseWorkerCount({ requested: 0, concurrency: 500, environment: true, cores: 2 }), {
    workers: 0,
    reason: '--workers 0',
  });
});
