import { setMaxListeners } from 'node:events';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { emptyUsage } from '../model/messages.js';
import { RunError, serializeError } from '../errors.js';
import type { RolloutOutcome, RolloutSettings, RolloutTask } from '../run/rollout.js';
import type { RemoteRunner } from '../run/execute-run.js';
import type { RunStore } from '../run/store.js';
import { ToolSpecsMemo } from '../run/tool-specs-memo.js';
import { bullConnection, checkReachable, connect, parseQueueUrl, type QueueAddress } from './connection.js';
import {
  announcementKey,
  describeAnnouncement,
  interruptKey,
  jobIdFor,
  publishRun,
  queueNameFor,
  readWorkers,
  RUNS_KEY,
  stoppedKey,
  type WorkerReport,
  workersKey,
} from './run-channel.js';

export interface QueueOptions {
  url: string;
  /** Seconds a job may miss its worker's heartbeat before another worker takes it over (default 30). */
  stalledSeconds?: number;
  /** Rollouts in flight across all workers of the run (BullMQ's global concurrency). */
  maxInFlight?: number;
  /** Rollouts started per minute across all workers (BullMQ's global rate limit). */
  perMinute?: number;
}

/** What a job carries: the task without the run's settings, which workers read from the announcement. */
export type QueuedTask = Omit<RolloutTask, 'settings'>;

interface Waiter {
  jobId: string;
  task: RolloutTask;
  resolve(outcome: RolloutOutcome): void;
  reject(error: unknown): void;
}

/**
 * How often the coordinator checks that the run is still in Redis and re-reads jobs whose events it may have missed.
 */
const WATCH_MS = 2000;

/**
 * How long every worker the coordinator hears from must have refused the run before it gives up: long
 * enough for each running worker (polling each second) to have read the run and said whether it serves it.
 */
const REFUSED_FOR_MS = 6000;

/**
 * How long an interrupt waits for workers to hand back the rollouts they run (cut off, as pending)
 * before it stops waiting: a worker that died or is cut off from Redis never answers, and a signal
 * must still stop the coordinator. Those jobs stay queued; a rerun finds them under the same ids.
 */
const INTERRUPT_WAIT_MS = 5000;

/**
 * The coordinator side of a queued run: a RolloutRunner whose rollouts are BullMQ jobs run by
 * `traj worker` processes anywhere. The pipeline keys, samples and lands exactly as with the
 * local pool; this class only moves tasks out and outcomes back.
 */
export class QueueCoordinator implements RemoteRunner {
  /** Workers are not known in advance; shown as 0 in the start line. */
  readonly workers = 0;
  private readonly waiters = new Map<string, Waiter>();
  private lost: RunError | undefined;
  private stoppedByUser = false;
  /** Every worker refused the run: its jobs are removed at close, as nothing will run them. */
  private refused = false;
  private watchTimer: NodeJS.Timeout | undefined;
  /** Since when (ms, this machine's clock) every worker heard from has refused the run. */
  private refusedSince: number | undefined;
  /** The serving workers' last reports, summed: the progress line's model requests and concurrency. */
  private load = { requests: 0, level: 0, max: 0 };
  /** Outcomes arrive parsed from Redis, each with its own tool-spec array: one array per tool set, as from the local pool. */
  private readonly tools = new ToolSpecsMemo();

  private constructor(
    private readonly address: QueueAddress,
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly runName: string,
    private readonly store: RunStore,
  ) {}

  static async open(
    options: QueueOptions & { store: RunStore; settings: RolloutSettings; fingerprint: string; maxAttempts: number },
  ): Promise<QueueCoordinator> {
    const address = parseQueueUrl(options.url);
    await checkReachable(address);
    const redis = connect(address);
    redis.on('error', () => undefined);
    const run = options.settings.run;
    const stalledMs = Math.round((options.stalledSeconds ?? 30) * 1000);
    const announcement = await describeAnnouncement({
      run,
      fingerprint: options.fingerprint,
      settings: options.settings,
      stalledMs,
      maxStalls: options.maxAttempts,
    });
    const connection = bullConnection(address);
    const queue = new Queue(queueNameFor(run), { connection });
    const events = new QueueEvents(queueNameFor(run), { connection });
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    setMaxListeners(0, events);
    await events.waitUntilReady();
    await publishRun(redis, announcement);
    if (options.maxInFlight) await queue.setGlobalConcurrency(options.maxInFlight);
    else await queue.removeGlobalConcurrency();
    if (options.perMinute) await queue.setGlobalRateLimit(options.perMinute, 60_000);
    else await queue.removeGlobalRateLimit();
    const coordinator = new QueueCoordinator(address, redis, queue, events, run, options.store);
    coordinator.listen();
    return coordinator;
  }

  /** Model requests the run's workers have in flight (as they last reported, at most ~3 s ago). */
  requestsInFlight(): number {
    return this.load.requests;
  }

  /** The workers' endpoint gates added up: their levels over their caps. */
  concurrencyLevel(): { level: number; max: number } {
    return { level: this.load.level, max: this.load.max };
  }

  run(task: RolloutTask): Promise<RolloutOutcome> {
    if (this.lost) return Promise.resolve(lostOutcome(task, this.lost));
    // A failure already recorded for this prompt makes the retry a new job; a job queued for this
    // try by an earlier coordinator (killed meanwhile) is found again under the same id.
    const attempt = this.store.lookup(task.key, task.sample)?.attempts ?? 0;
    const jobId = jobIdFor(task.key, task.sample, attempt);
    const outcome = new Promise<RolloutOutcome>((resolve, reject) =>
      this.waiters.set(jobId, { jobId, task, resolve, reject }),
    );
    const { settings: _settings, ...data } = task;
    this.queue
      .add('rollout', data satisfies QueuedTask, { jobId, attempts: 1, removeOnComplete: false, removeOnFail: false })
      .then(() => this.check(jobId))
      .catch((error: unknown) => this.settleError(jobId, error));
    return outcome;
  }

  /**
   * Interrupt the run's rollouts: waiting jobs are taken back, workers stop the ones they run. What a
   * worker has not handed back within INTERRUPT_WAIT_MS (it died, or Redis is out of reach) is settled
   * as interrupted all the same, so the pipeline ends.
   */
  interrupt(): void {
    const awaited = [...this.waiters.values()];
    const deadline = setTimeout(() => {
      for (const waiter of awaited) this.settle(waiter.jobId, interruptedOutcome(waiter.task));
    }, INTERRUPT_WAIT_MS);
    deadline.unref();
    void (async () => {
      await this.redis.incr(interruptKey(this.runName));
      await this.takeBack(awaited, (waiter) => interruptedOutcome(waiter.task));
    })().catch(() => undefined);
  }

  /** Remove the jobs no worker has started and settle their waiters; running ones are left to their workers. */
  private async takeBack(waiters: Waiter[], outcome: (waiter: Waiter) => RolloutOutcome): Promise<void> {
    for (const waiter of waiters) {
      const job = await Job.fromId(this.queue, waiter.jobId);
      const state = job ? await job.getState() : 'unknown';
      if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'unknown') {
        await job?.remove().catch(() => undefined);
        this.settle(waiter.jobId, outcome(waiter));
      }
    }
  }

  /**
   * Detach. A finished run's jobs and settings are removed from Redis; an interrupted one keeps its
   * jobs, so rerunning the command re-attaches and lands what finished meanwhile.
   */
  async close(finished: boolean): Promise<void> {
    if (this.watchTimer) clearInterval(this.watchTimer);
    // A run drained by --stop is removed again: a job this coordinator queued while it was drained must not linger.
    if ((finished && !this.lost) || this.stoppedByUser || this.refused)
      await settleWithin(
        removeRun(this.redis, this.queue, this.runName).catch(() => undefined),
        10_000,
      );
    // A close waits for Redis; one that just restarted (or is gone) must not keep the command alive.
    await settleWithin(
      Promise.allSettled([(async () => this.events.close())(), (async () => this.queue.close())()]),
      5000,
    );
    // Not awaited: against a Redis that lost its data these may never settle.
    void this.events.disconnect().catch(() => undefined);
    void this.queue.disconnect().catch(() => undefined);
    this.redis.disconnect();
  }

  private listen(): void {
    // The event carries the job's result: landing it from there spares re-reading the whole job from Redis.
    this.events.on('completed', ({ jobId, returnvalue }) => {
      if (!isOutcome(returnvalue)) return void this.check(jobId);
      if (!this.waiters.has(jobId)) return;
      this.settle(jobId, returnvalue);
      this.forget(jobId);
    });
    this.events.on('failed', ({ jobId }) => void this.check(jobId));
    this.watchTimer = setInterval(() => void this.watch(), WATCH_MS);
    this.watchTimer.unref();
  }

  /** Settle a waiter from the job's state in Redis, if it has finished. */
  private async check(jobId: string): Promise<void> {
    if (!this.waiters.has(jobId)) return;
    const job = await Job.fromId(this.queue, jobId);
    if (!job) return;
    if (job.finishedOn && job.returnvalue && !job.failedReason) {
      this.settle(jobId, job.returnvalue as RolloutOutcome);
      this.forget(jobId);
    } else if (job.failedReason) {
      // The job stalled more often than the run allows (its workers died), or a worker could not run it.
      this.settleError(
        jobId,
        new RunError(`queued rollout failed: ${job.failedReason}`, { code: 'worker_crashed', retryable: true }),
      );
      this.forget(jobId);
    }
  }

  /** Is the run still in Redis? Land every awaited job that has finished, in case its event went by unseen. */
  private async watch(): Promise<void> {
    if (this.lost) return;
    try {
      const [announced, stopped] = await Promise.all([
        this.redis.exists(announcementKey(this.runName)),
        this.redis.exists(stoppedKey(this.runName)),
      ]);
      if (!announced) return this.loseRun(stopped === 1);
      await this.checkFinished();
      await this.checkTakers();
    } catch {
      // Redis is unreachable for now: ioredis reconnects, and the next round checks again.
    }
  }

  /**
   * One round trip reads every awaited job's finish stamps; only the finished ones are read whole.
   * Reading each whole job (its task and messages) every sweep took ~7% of the coordinator's
   * thread at 512 in flight.
   */
  private async checkFinished(): Promise<void> {
    const jobIds = [...this.waiters.keys()];
    if (jobIds.length === 0) return;
    const stamps = this.redis.pipeline();
    for (const jobId of jobIds) stamps.hmget(this.queue.toKey(jobId), 'finishedOn', 'failedReason');
    const replies = (await stamps.exec()) ?? [];
    await Promise.all(
      jobIds.map((jobId, index) => {
        const [error, fields] = replies[index] ?? [];
        const finished = !error && Array.isArray(fields) && fields.some((field) => field !== null);
        return finished ? this.check(jobId) : undefined;
      }),
    );
  }

  /**
   * Give up on the run when, for REFUSED_FOR_MS, some worker has refused it and none serves it: its
   * jobs would wait forever. A run no worker has seen yet keeps waiting (workers may start later).
   */
  private async checkTakers(): Promise<void> {
    const reports = await readWorkers(this.redis, this.runName);
    const all = [...reports.values()];
    const serving = all.filter((report) => report.state === 'serving');
    this.load = {
      requests: sum(serving.map((report) => report.requests)),
      level: sum(serving.map((report) => report.level)),
      max: sum(serving.map((report) => report.max)),
    };
    if (this.waiters.size === 0) return;
    if (all.length === 0 || all.some((report) => report.state === 'serving')) {
      this.refusedSince = undefined;
      return;
    }
    this.refusedSince ??= Date.now();
    if (Date.now() - this.refusedSince >= REFUSED_FOR_MS) await this.refuseRun(reports);
  }

  private async refuseRun(reports: Map<string, WorkerReport>): Promise<void> {
    const refusals = [...reports].map(
      ([worker, report]) => `worker ${worker} refused it: ${report.reasons.join('; ')}`,
    );
    this.lost = new RunError(
      `no traj worker will take run '${this.runName}': ${refusals.join('. ')}. Its queued jobs were removed; ` +
        "start a `traj worker` that matches (same code version, tool schemas and environment module; --sandbox as the run's) " +
        'and rerun the same command.',
      { code: 'queue_refused' },
    );
    this.refused = true;
    const lost = this.lost;
    await this.takeBack([...this.waiters.values()], (waiter) => lostOutcome(waiter.task, lost));
  }

  private loseRun(stopped: boolean): void {
    this.stoppedByUser = stopped;
    this.lost = stopped
      ? new RunError(
          `run '${this.runName}' was stopped with --stop: its queued jobs were removed; rerun the same command to queue what is unfinished`,
          { code: 'queue_lost' },
        )
      : new RunError(
          `Redis at ${this.address.url} lost run '${this.runName}' (restarted without persistence?): its queued jobs are gone. ` +
            'Landed results are safe in the run store; rerun the same command to queue the unfinished prompts again ' +
            '(start redis-server with --appendonly yes so a restart keeps the queue).',
          { code: 'queue_lost' },
        );
    for (const waiter of [...this.waiters.values()]) this.settle(waiter.jobId, lostOutcome(waiter.task, this.lost));
  }

  private settle(jobId: string, outcome: RolloutOutcome): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    this.waiters.delete(jobId);
    waiter.resolve(this.tools.shared(outcome));
  }

  private settleError(jobId: string, error: unknown): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    this.waiters.delete(jobId);
    waiter.reject(error);
  }

  /** A landed job leaves Redis shortly after (its store transaction commits at the end of this turn). */
  private forget(jobId: string): void {
    setTimeout(() => void this.queue.remove(jobId).catch(() => undefined), 200).unref();
  }
}

/** Remove a run from Redis: its jobs (waiting, running, finished), its settings, its place in the run set. */
export async function removeRun(redis: Redis, queue: Queue, run: string): Promise<void> {
  await redis.multi().srem(RUNS_KEY, run).del(announcementKey(run)).del(workersKey(run)).exec();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await redis.del(interruptKey(run));
}

/**
 * `--stop`: drain a run. Workers stop taking its jobs and interrupt the ones they run; its jobs
 * and settings are removed. Landed results stay in the run store; rerunning the command queues
 * what is unfinished.
 */
export async function stopQueuedRun(url: string, run: string): Promise<{ jobs: number }> {
  const address = parseQueueUrl(url);
  await checkReachable(address);
  const redis = connect(address);
  redis.on('error', () => undefined);
  const queue = new Queue(queueNameFor(run), { connection: bullConnection(address) });
  queue.on('error', () => undefined);
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    await redis.multi().incr(interruptKey(run)).set(stoppedKey(run), new Date().toISOString(), 'EX', 86_400).exec();
    await removeRun(redis, queue, run);
    return { jobs: Object.values(counts).reduce((sum, count) => sum + count, 0) };
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/** A worker's result as the completed event brings it (parsed JSON); anything else is re-read from the job. */
function isOutcome(value: unknown): value is RolloutOutcome {
  return typeof value === 'object' && value !== null && 'key' in value && 'result' in value;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** Wait for a promise at most `ms`. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function interruptedOutcome(task: RolloutTask): RolloutOutcome {
  return { key: task.key, sample: task.sample, result: emptyResult(task), tools: [], interrupted: true };
}

/** The queue vanished: a run-level fault, so the prompt goes back to pending without using an attempt. */
function lostOutcome(task: RolloutTask, error: RunError): RolloutOutcome {
  return {
    key: task.key,
    sample: task.sample,
    result: emptyResult(task),
    tools: [],
    interrupted: false,
    error: serializeError(error),
  };
}

function emptyResult(task: RolloutTask): RolloutOutcome['result'] {
  return {
    messages: task.messages,
    finishReason: 'api_error',
    turns: 0,
    apiCalls: 0,
    toolCalls: [],
    usage: emptyUsage(),
    timings: { started_at: new Date().toISOString(), duration_ms: 0, model_ms: 0, tool_ms: 0 },
  };
}
