import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, conversationScript, reply, startScriptedServer } from '../../src/testing/index.js';
import { freePort, startRedis } from '../../tests/helpers/redis.js';
import { CLI, measureCli, writePrompts } from './processes.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';

/** CPU work in the sandbox: a shell loop that keeps one core busy for a fraction of a second. */
const CPU_COMMAND = "awk 'BEGIN { for (i = 0; i < 4000000; i++) s += i * i; print s }'";

/**
 * A CPU-bound tool workload on the local pool, then over the queue with 1 and with 3 `traj worker`
 * processes. Reports the speed-up of 3 workers over 1 and the queue's per-rollout overhead against
 * the local pool. With 2 cores the speed-up is bounded by 2 (and less: the coordinator, Redis and
 * the model server share them).
 */
export async function queueScaleBenchmark(prompts: number): Promise<Record<string, number | string>> {
  const scratch = mkdtempSync(join(tmpdir(), 'traj-bench-queue-'));
  const server = await startScriptedServer(
    conversationScript([callTool('terminal', { command: CPU_COMMAND }), reply('done')]),
    { record: false },
  );
  const redis = await startRedis({ port: await freePort() });
  try {
    const dataset = join(scratch, 'prompts.jsonl');
    writePrompts(dataset, prompts, 'cpu task');
    const batch = (run: string, flags: string[]) =>
      scriptedBatchArgs(dataset, run, server.url, 'NO_KEY', [
        '--toolsets',
        'terminal',
        '--concurrency',
        '12',
        ...flags,
      ]);
    const local = await measureCli(batch('local', ['--workers', '1']), { cwd: scratch });
    if (local.code !== 0) throw new Error(`local batch exited ${local.code}: ${local.stderr.slice(-1500)}`);
    const queued = async (workers: number) => {
      const children = Array.from({ length: workers }, () => startWorker(redis.url, scratch));
      try {
        const measured = await measureCli(batch(`queue-${workers}`, ['--queue', redis.url]), {
          cwd: scratch,
        });
        if (measured.code !== 0)
          throw new Error(`queued batch exited ${measured.code}: ${measured.stderr.slice(-1500)}`);
        return measured.wall_ms / 1000;
      } finally {
        await Promise.all(children.map(stopChild));
      }
    };
    const one = await queued(1);
    const three = await queued(3);
    const localSeconds = local.wall_ms / 1000;
    return {
      scenario: 'queue-cpu',
      prompts,
      local_pool_1_thread_s: round(localSeconds),
      queue_1_worker_s: round(one),
      queue_3_workers_s: round(three),
      speedup_3_over_1: round(one / three),
      queue_overhead_ms_per_rollout: round(((one - localSeconds) * 1000) / prompts),
      note: 'speed-up bounded by the machine: 2 cores shared by the coordinator, Redis, the model server and the workers',
    };
  } finally {
    await redis.stop();
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function startWorker(url: string, cwd: string): ChildProcess {
  return spawn(process.execPath, [CLI, 'worker', '--queue', url, '--concurrency', '4', '--threads', '1'], {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, NO_KEY: 'x' },
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
