import { availableParallelism, hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { RolloutPool } from '../run/pool.js';
import { runGate } from '../run/run-gate.js';
import type { RolloutOutcome } from '../run/rollout.js';
import { bullConnection, checkReachable, connect, parseQueueUrl, type QueueAddress } from './connection.js';
import { settleWithin, type QueuedTask } from './coordinator.js';
import {
  interruptKey,
  queueNameFor,
  readRun,
  refusalReasons,
  reportWorker,
  RUNS_KEY,
  type RunAnnouncement,
  sweepFinishedRun,
  withdrawWorker,
  type WorkerReport,
} from './run-channel.js';

export interface QueueWorkerOptions {
  url: string;
  /** Rollouts this worker runs at once, across every run it serves. */
  concurrency: number;
  /** Worker threads of its local pool (default: CPU cores, at most --concurrency). */
  threads?: number;
  /** The sandbox this machine offers; a run using another is refused. */
  sandbox?: 'local' | 'docker';
  /** How often the run set is read (default 1 s). */
  pollMs?: number;
  log(line: string): void;
}

/** One run this worker serves: a BullMQ worker on the run's queue feeding a local rollout pool. */
interface Attached {
  announcement: RunAnnouncement;
  worker: Worker<QueuedTask, RolloutOutcome>;
  pool: RolloutPool;
  interrupts: string | null;
}

/**
 * `traj worker`: take rollout jobs of every announced run this worker agrees with and run them on
 * the same piscina pool and rollout executor as a local run; each outcome is the job's result.
 */
export class QueueWorker {
  private readonly attached = new Map<string, Attached>();
  private readonly refused = new Map<string, string>();
  private readonly address: QueueAddress;
  private redis: Redis | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  /** How the coordinator names this worker when it says who refused its run. */
  readonly id = `${hostname()}:${process.pid}`;
  completed = 0;

  constructor(private readonly options: QueueWorkerOptions) {
    this.address = parseQueueUrl(options.url);
  }

  async start(): Promise<void> {
    await checkReachable(this.address);
    this.redis = connect(this.address);
    this.redis.on('error', () => undefined);
    await this.poll();
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll()).catch(() => undefined);
    }, this.options.pollMs ?? 1000);
  }

  /**
   * Stop taking jobs. Graceful: rollouts in flight finish and their results are returned. Not
   * graceful: they are interrupted; their jobs stall and another worker takes them over.
   */
  async stop(graceful: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.polling;
    await Promise.allSettled([...this.attached.keys()].map((run) => this.detach(run, graceful)));
    // A stopped worker's refusals no longer count: the coordinator must not give up on a run because of it.
    const redis = this.redis;
    if (redis)
      await settleWithin(
        Promise.allSettled([...this.refused.keys()].map((run) => withdrawWorker(redis, run, this.id))),
        2000,
      );
    this.redis?.disconnect();
  }

  private async poll(): Promise<void> {
    const redis = this.redis!;
    const runs = new Set(await redis.smembers(RUNS_KEY));
    for (const run of this.attached.keys()) {
      if (!runs.has(run)) {
        this.options.log(`[traj worker] run '${run}' finished or was stopped: leaving it`);
        await this.detach(run, false);
      }
    }
    for (const run of runs) {
      const current = this.attached.get(run);
      const announcement = await readRun(redis, run);
      if (!announcement) continue;
      if (current && current.announcement.announcedAt !== announcement.announcedAt) {
        // The coordinator restarted, maybe with other settings: agree again before taking more jobs.
        await this.detach(run, true);
      } else if (current) {
        await this.followInterrupts(current);
        await reportWorker(redis, run, this.id, serving(current.pool));
        continue;
      }
      await this.attach(announcement);
    }
  }

  private async attach(announcement: RunAnnouncement): Promise<void> {
    const reasons = await refusalReasons(announcement, { sandbox: this.options.sandbox });
    if (reasons.length > 0) {
      const text = reasons.join('; ');
      if (this.refused.get(announcement.run) !== text)
        this.options.log(`[traj worker] refusing run '${announcement.run}': ${text}`);
      this.refused.set(announcement.run, text);
      // Repeated every poll: the coordinator gives up on its run only while every worker it hears from refuses it.
      await reportWorker(this.redis!, announcement.run, this.id, { state: 'refused', reasons });
      return;
    }
    this.refused.delete(announcement.run);
    const pool = new RolloutPool({
      workers: this.options.threads ?? availableParallelism(),
      concurrency: this.options.concurrency,
      // One adaptive gate for this process's threads; each traj worker adapts to the 429s it sees.
      gate: runGate(announcement.settings.endpoint, this.options.concurrency),
    });
    const worker = new Worker<QueuedTask, RolloutOutcome>(
      queueNameFor(announcement.run),
      (job) => this.process(announcement, pool, job),
      {
        connection: bullConnection(this.address),
        concurrency: this.options.concurrency,
        // The heartbeat: a job whose lock is not renewed within the interval is taken over by another worker.
        lockDuration: announcement.stalledMs,
        stalledInterval: announcement.stalledMs,
        maxStalledCount: announcement.maxStalls,
      },
    );
    worker.on('error', (error) => this.options.log(`[traj worker] queue error: ${error.message}`));
    this.attached.set(announcement.run, { announcement, worker, pool, interrupts: null });
    await reportWorker(this.redis!, announcement.run, this.id, serving(pool));
    this.options.log(
      `[traj worker] serving run '${announcement.run}' (${announcement.settings.endpoint.model}, sandbox ${announcement.settings.sandbox.kind}, ${this.options.concurrency} at once)`,
    );
  }

  private async process(
    announcement: RunAnnouncement,
    pool: RolloutPool,
    job: Job<QueuedTask>,
  ): Promise<RolloutOutcome> {
    const outcome = await pool.run({ ...job.data, settings: announcement.settings });
    this.completed++;
    return outcome;
  }

  /** The coordinator asked to interrupt the run's rollouts (its grace period is over, or a run-level fault). */
  private async followInterrupts(attached: Attached): Promise<void> {
    const value = (await this.redis!.get(interruptKey(attached.announcement.run))) ?? '';
    if (attached.interrupts !== null && value !== attached.interrupts) attached.pool.interrupt();
    attached.interrupts = value;
  }

  private async detach(run: string, graceful: boolean): Promise<void> {
    const attached = this.attached.get(run);
    if (!attached) return;
    this.attached.delete(run);
    await settleWithin(
      withdrawWorker(this.redis!, run, this.id).catch(() => undefined),
      2000,
    );
    if (!graceful) attached.pool.interrupt();
    // Graceful: wait for the running jobs; a Redis that is gone must not hold the worker forever.
    await settleWithin(
      attached.worker.close(!graceful).catch(() => undefined),
      graceful ? 600_000 : 5000,
    );
    // Closed: no stalled-job check of this worker can write the run's queue back after this.
    await settleWithin(
      sweepFinishedRun(this.redis!, run, [attached.worker.keys.meta, attached.worker.keys['stalled-check']]).catch(
        () => undefined,
      ),
      2000,
    );
    void attached.worker.disconnect().catch(() => undefined);
    await attached.pool.close();
  }
}

/** A serving worker's report: what the coordinator's progress line sums over workers. */
function serving(pool: RolloutPool): Omit<WorkerReport, 'at'> {
  const gate = pool.gate?.snapshot();
  return {
    state: 'serving',
    reasons: [],
    requests: pool.requestsInFlight(),
    level: gate?.level ?? 0,
    max: gate?.max ?? 0,
  };
}
