import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { isTrajError } from '../../src/errors.js';
import { executeRun, storePathFor } from '../../src/run/execute-run.js';
import { startLocalPool } from '../../src/run/pool.js';
import { RunStore } from '../../src/run/store.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

for (const workers of [0, 1])
  test(`a runner a caller started early is closed when the run fails before its first rollout (--workers ${workers})`, async (t) => {
    await closedOnEarlyFault(t, workers);
  });

async function closedOnEarlyFault(t: TestContext, workers: number): Promise<void> {
  const checkpoints = temporaryDirectory(t);
  const earlier = RunStore.open(storePathFor(checkpoints, 'early'));
  earlier.initRun({ name: 'early', kind: 'batch', config: {}, fingerprintParts: { model: 'a' } });
  earlier.close();
  const settings = scriptedRolloutSettings('http://127.0.0.1:9/v1', 'early');
  const local = startLocalPool({ workers, concurrency: 4, endpoint: settings.endpoint, environment: false });
  assert.equal(local.pool.workers, workers);
  await assert.rejects(
    executeRun({
      kind: 'batch',
      run: 'early',
      checkpointsDir: checkpoints,
      endpoint: settings.endpoint,
      settings,
      fingerprintParts: { model: 'b' },
      config: {},
      force: false,
      entries: async function* () {},
      filters: [],
      concurrency: 4,
      maxAttempts: 1,
      graceMs: 0,
      pool: local,
    }),
    (error: unknown) => isTrajError(error) && error.code === 'fingerprint_changed',
  );
  assert.equal(local.pool.isClosing, true);
}

test('closing a runner twice waits for the one close, on threads and on this thread', async () => {
  const settings = scriptedRolloutSettings('http://127.0.0.1:9/v1', 'twice');
  for (const workers of [1, 0]) {
    const { pool, choice } = startLocalPool({
      workers,
      concurrency: 4,
      endpoint: settings.endpoint,
      environment: false,
    });
    assert.equal(choice.workers, workers);
    const first = pool.close();
    assert.equal(pool.close(), first);
    await first;
  }
});

test('a pool closed while its threads still load their modules closes without aborting the process', async () => {
  // Node 20 aborts the process when a thread is stopped mid-instantiation (~100 ms into its start
  // here): the loop closes pools across the whole loading window. An abort fails the test file.
  const settings = scriptedRolloutSettings('http://127.0.0.1:9/v1', 'loading');
  for (let delayMs = 0; delayMs <= 250; delayMs += 5) {
    const { pool } = startLocalPool({ workers: 1, concurrency: 4, endpoint: settings.endpoint, environment: false });
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    await pool.close();
  }
});
