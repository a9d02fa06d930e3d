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
