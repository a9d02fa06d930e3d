import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { RolloutSettingsSchema } from '../run/rollout.js';
import { builtinTools } from '../tools/builtin.js';
import { toolSpec } from '../tools/tool-spec.js';
import { codeVersion } from './code-version.js';

/**
 * What the coordinator publishes in Redis about a run, and what workers read: the names of the keys,
 * the run's settings, and what a worker must agree with before it takes the run's jobs.
 */
const PREFIX = 'traj';
/** The set of runs with jobs to take: workers poll it. */
export const RUNS_KEY = `${PREFIX}:runs`;

export const RunAnnouncementSchema = z.object({
  run: z.string(),
  codeVersion: z.string(),
  /** The run store's fingerprint (model, endpoint, distribution, environment, ...). */
  fingerprint: z.string(),
  /** Hash of the tool schemas and of the environment module the rollouts use. */
  toolsFingerprint: z.string(),
  environmentHash: z.string().nullable(),
  settings: RolloutSettingsSchema,
  /** How long a job may go without its worker's heartbeat before another worker takes it over. */
  stalledMs: z.number().int().positive(),
  /** How many times a job may stall (its worker died) before it is recorded as a failure. */
  maxStalls: z.number().int().nonnegative(),
  announcedAt: z.string(),
});
export type RunAnnouncement = z.infer<typeof RunAnnouncementSchema>;

/** BullMQ queue names may not hold ':'; run names are letters, digits, '.', '_' and '-' already. */
export function queueNameFor(run: string): string {
  return `traj-run-${run}`;
}

export function announcementKey(run: string): string {
  return `${PREFIX}:run:${run}`;
}

/** Set by `--stop`: a coordinator still attached learns why its run vanished. */
export function stoppedKey(run: string): string {
  return `${PREFIX}:run:${run}:stopped`;
}

/** Bumped when the coordinator interrupts the run's in-flight rollouts (grace over, a run-level fault). */
export function interruptKey(run: string): string {
  return `${PREFIX}:run:${run}:interrupt`;
}

/** What each worker that saw the run says about it (serving or refused, and why), stamped with Redis's clock. */
export function workersKey(run: string): string {
  return `${PREFIX}:run:${run}:workers`;
}

/**
 * The job id of a rollout: the prompt key, the sample and the number of failures already recorded
 * for it (a job id may not hold ':'). A row therefore can never be queued twice for the same try,
 * a coordinator that re-attaches finds the job it queued before, and a retry after a recorded
 * failure is a new job rather than the old, failed one.
 */
export function jobIdFor(key: string, sample: number, attempt: number): string {
  return `${encodeURIComponent(key)}~${sample}~${attempt}`;
}

export async function toolsFingerprint(): Promise<string> {
  const specs = (await builtinTools()).map(toolSpec).sort((a, b) => a.function.name.localeCompare(b.function.name));
  return sha256(JSON.stringify(specs)).slice(0, 16);
}

export function environmentHash(module: string | undefined): string | null {
  if (!module) return null;
  return existsSync(module) ? sha256(readFileSync(module)).slice(0, 16) : 'missing';
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function describeAnnouncement(
  fields: Omit<RunAnnouncement, 'codeVersion' | 'toolsFingerprint' | 'environmentHash' | 'announcedAt'>,
): Promise<RunAnnouncement> {
  return {
    ...fields,
    codeVersion: codeVersion(),
    toolsFingerprint: await toolsFingerprint(),
    environmentHash: environmentHash(fields.settings.environmentModule),
    announcedAt: new Date().toISOString(),
  };
}

export async function publishRun(redis: Redis, announcement: RunAnnouncement): Promise<void> {
  await redis
    .multi()
    .set(announcementKey(announcement.run), JSON.stringify(announcement))
    .del(stoppedKey(announcement.run))
    .sadd(RUNS_KEY, announcement.run)
    .exec();
}

export async function readRun(redis: Redis, run: string): Promise<RunAnnouncement | undefined> {
  const text = await redis.get(announcementKey(run));
  return text ? RunAnnouncementSchema.parse(JSON.parse(text)) : undefined;
}

/**
 * Why this worker must not take the run's jobs, one line per difference, or [] when it may. A
 * `sandbox` the worker was started with must be the run's.
 */
export async function refusalReasons(
  announcement: RunAnnouncement,
  worker: { sandbox?: 'local' | 'docker' },
): Promise<string[]> {
  const reasons: string[] = [];
  const own = codeVersion();
  if (announcement.codeVersion !== own)
    reasons.push(`code version differs: the run's is ${announcement.codeVersion}, this worker's is ${own}`);
  const tools = await toolsFingerprint();
  if (announcement.toolsFingerprint !== tools)
    reasons.push(
      `fingerprint differs (tool schemas): the run's is ${announcement.toolsFingerprint}, this worker's is ${tools}`,
    );
  const environment = environmentHash(announcement.settings.environmentModule);
  if (announcement.environmentHash !== environment) {
    reasons.push(
      environment === 'missing'
        ? `fingerprint differs (environment): ${announcement.settings.environmentModule} does not exist on this worker`
        : `fingerprint differs (environment module ${announcement.settings.environmentModule}): the run's is ${announcement.environmentHash}, this worker's is ${environment}`,
    );
  }
  if (worker.sandbox && worker.sandbox !== announcement.settings.sandbox.kind) {
    reasons.push(
      `sandbox differs: the run uses ${announcement.settings.sandbox.kind}, this worker was started with --sandbox ${worker.sandbox}`,
    );
  }
  return reasons;
}

/** A worker's word on a run: it serves it, or refuses it and why. `at`: Redis's clock (ms) when it last said so. */
export const WorkerReportSchema = z.object({
  state: z.enum(['serving', 'refused']),
  reasons: z.array(z.string()).default([]),
  /** A serving worker's model requests in flight for the run, and its endpoint gate's level and cap. */
  requests: z.number().int().nonnegative().default(0),
  level: z.number().int().nonnegative().default(0),
  max: z.number().int().nonnegative().default(0),
  at: z.number(),
});
export type WorkerReport = z.infer<typeof WorkerReportSchema>;

/** A worker repeats its word every poll (1 s); one not heard from for this long is gone. */
export const WORKER_REPORT_FRESH_MS = 10_000;

/**
 * Written only while the run is announced, so a report racing the run's removal cannot leave a key
 * behind; stamped with Redis's clock, so the coordinator's freshness check does not depend on machines' clocks.
 * The stamp is spliced into the JSON text (ARGV[3] is an object): cjson would turn an empty list into `{}`.
 */
const REPORT_SCRIPT = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
local time = redis.call('TIME')
local at = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[2], ARGV[2], '{"at":' .. string.format('%d', at) .. ',' .. string.sub(ARGV[3], 2))
return 1
`;

/** Say whether this worker serves the run or refuses it (and why), for the coordinator to read. */
export async function reportWorker(
  redis: Redis,
  run: string,
  worker: string,
  report: Omit<z.input<typeof WorkerReportSchema>, 'at'>,
): Promise<void> {
  await redis.eval(REPORT_SCRIPT, 2, RUNS_KEY, workersKey(run), run, worker, JSON.stringify(report));
}

/** This worker stopped serving (or refusing) the run: its word no longer counts. */
export async function withdrawWorker(redis: Redis, run: string, worker: string): Promise<void> {
  await redis.hdel(workersKey(run), worker);
}

/**
 * After a worker leaves a run: when the run is no longer announced (it finished, or was stopped),
 * delete what its queue's stalled-job check writes. BullMQ writes the meta hash back whenever it
 * is missing, so a check that ran between the coordinator's removal of the run and this worker's
 * leaving would otherwise leave it in Redis for good (the check's own marker expires, and goes
 * too). A run announced again keeps them: BullMQ rewrites both anyway.
 */
export async function sweepFinishedRun(redis: Redis, run: string, keys: readonly string[]): Promise<void> {
  if (await redis.sismember(RUNS_KEY, run)) return;
  await redis.del(...keys);
}

/** The workers heard from within WORKER_REPORT_FRESH_MS, by worker id. */
export async function readWorkers(redis: Redis, run: string): Promise<Map<string, WorkerReport>> {
  const [entries, [seconds, micros]] = await Promise.all([redis.hgetall(workersKey(run)), redis.time()]);
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const fresh = new Map<string, WorkerReport>();
  for (const [worker, text] of Object.entries(entries)) {
    const parsed = WorkerReportSchema.safeParse(JSON.parse(text));
    if (parsed.success && now - parsed.data.at <= WORKER_REPORT_FRESH_MS) fresh.set(worker, parsed.data);
  }
  return fresh;
}
