import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import type { RolloutSettings } from '../../src/run/rollout.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';
import { startCli } from './cli.js';
import { startRedis, type RedisProcess } from './redis.js';

/** Distributed-run helpers shared by the tests/e2e/queue*.test.ts files: a real redis-server, real CLI processes. */

/** The settings a queued run announces, as far as the queue's unit tests read them. */
export function queuedRunSettings(run: string): RolloutSettings {
  return {
    run,
    endpoint: {
      base_url: 'http://127.0.0.1:1/v1',
      model: 'm',
      api_key_env: 'K',
      timeout_ms: 1000,
      max_retries: 0,
      concurrency: 1,
      tool_call_format: 'native',
    },
    maxTurns: 3,
    sandbox: { kind: 'local' },
    budget: {},
    agent: 'model',
    toolConcurrency: 8,
  } as unknown as RolloutSettings;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function storeRows(directory: string, run: string, sql: string): unknown[] {
  const db = new Database(join(directory, 'checkpoints', `${run}.sqlite`), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

export function doneCount(directory: string, run: string): number {
  try {
    return (storeRows(directory, run, `SELECT COUNT(*) AS n FROM items WHERE status = 'done'`) as { n: number }[])[0]!
      .n;
  } catch {
    return 0; // not created yet
  }
}

export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export async function redisFor(t: TestContext, options: { persistence?: string } = {}): Promise<RedisProcess> {
  const redis = await startRedis(options);
  t.after(() => redis.stop());
  return redis;
}

/** A `traj worker` process, SIGKILLed at the end of the test if still running. */
export function startWorker(
  t: TestContext,
  directory: string,
  url: string,
  extra: string[] = [],
): ReturnType<typeof startCli> {
  const worker = startCli(['worker', '--queue', url, '--concurrency', '4', '--threads', '1', ...extra], {
    cwd: directory,
    env: { TRAJ_TEST_KEY: 'sk-test' },
  });
  t.after(async () => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await worker.done;
  });
  return worker;
}

export function batchArgs(dataset: string, run: string, baseUrl: string, url: string, extra: string[] = []): string[] {
  const queue = ['--queue', url, '--stalled-interval', '3'];
  return scriptedBatchArgs(dataset, run, baseUrl, 'TRAJ_TEST_KEY', [
    '--toolsets',
    'file',
    '--concurrency',
    '24',
    ...queue,
    ...extra,
  ]);
}

/**
 * A coordinator; one still running after `guardMs` (default 3 minutes) is SIGKILLed, so a hang fails the test
 * instead of stalling the suite.
 */
export function coordinator(directory: string, args: string[], guardMs = 180_000): ReturnType<typeof startCli> {
  const started = startCli(args, { cwd: directory, env: { TRAJ_TEST_KEY: 'sk-test' } });
  const guard = setTimeout(() => started.child.kill('SIGKILL'), guardMs);
  void started.done.then(() => clearTimeout(guard));
  return started;
}
