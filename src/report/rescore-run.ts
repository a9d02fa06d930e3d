import { existsSync } from 'node:fs';
import type { Endpoint } from '../config/endpoint.js';
import { PricingSchema } from '../config/pricing.js';
import { loadEnvironmentConfig, type JudgeConfig } from '../eval/environment-config.js';
import type { Environment } from '../eval/environment.js';
import type { JudgeSettings } from '../eval/judge.js';
import { loadEnvironment } from '../eval/load-environment.js';
import { ConfigError } from '../errors.js';
import { keyedItems } from '../run/environment-entries.js';
import { storePathFor } from '../run/execute-run.js';
import { writeRunOutputs } from '../run/outputs.js';
import { judgeFingerprint, StoredEvalSchema, type StoredEval } from '../run/stored-eval.js';
import { RunStore } from '../run/store.js';
import { canonicalJson } from '../util/hash.js';
import { finishEval } from './finish-eval.js';
import type { ReportFiles } from './report.js';
import type { EvalReport } from './report-schema.js';
import { rescoreRun, type RescoreSummary } from './rescore.js';

export interface RescoreStoredRunInput {
  run: string;
  checkpointsDir: string;
  /** The environment module to score with (--env); default: the one the run stored. */
  environmentModule?: string;
  /** The judges to grade with, from the run's own and the environment's config (the caller applies its flags). */
  judges(stored: StoredEval, config: JudgeConfig | undefined, policy: Endpoint | undefined): JudgeSettings | undefined;
  /** Default: the run's stored pass threshold. */
  passThreshold?: number;
  concurrency: number;
  outDir: string;
  /** Told before any reward runs: what scores the run, and with which judges. */
  onStart?(environment: Environment, judges: JudgeSettings | undefined): void;
}

export interface RescoredRun {
  summary: RescoreSummary;
  report: EvalReport;
  files: ReportFiles;
  trajectories: string;
}

/**
 * `traj eval --rescore RUN`: rewards and judging again over a run's stored trajectories, then its
 * report and outputs written again. The environment's items are read as rescoring goes, never held.
 */
export async function rescoreStoredRun(input: RescoreStoredRunInput): Promise<RescoredRun> {
  const { run } = input;
  const storePath = storePathFor(input.checkpointsDir, run);
  if (!existsSync(storePath))
    throw new ConfigError(
      `--rescore ${run}: no run store at ${storePath} (pass --checkpoints DIR if it lives elsewhere)`,
      { code: 'run_missing' },
    );
  const store = RunStore.open(storePath);
  try {
    const meta = store.meta();
    const parsed = StoredEvalSchema.safeParse(meta?.config.eval);
    if (!parsed.success)
      throw new ConfigError(`--rescore ${run}: ${storePath} is not an eval run (it has no stored environment)`, {
        code: 'run_not_eval',
      });
    const stored = parsed.data;
    const modulePath = input.environmentModule ?? stored.environment_module;
    const environment = await loadEnvironment(modulePath);
    const environmentConfig = loadEnvironmentConfig(modulePath);
    const policy = meta?.config.endpoint as Endpoint | undefined;
    const chosen = input.judges(stored, environmentConfig.judge, policy);
    // The run's own prices cost the new judge calls too (a provider-reported cost still wins).
    const pricing = PricingSchema.optional().safeParse(meta?.config.pricing);
    const judges = chosen && pricing.success && pricing.data ? { ...chosen, pricing: pricing.data } : chosen;
    const items = keyedItems(environment, {
      dataset: stored.dataset,
      limit: stored.limit,
      ...stored.environment_options,
    });
    const sandbox = meta?.config as {
      sandbox?: 'local' | 'docker';
      image?: string;
      workdir?: string;
      docker?: Record<string, unknown>;
      local?: Record<string, unknown>;
    };
    const passThreshold = input.passThreshold ?? stored.pass_threshold;
    input.onStart?.(environment, judges);
    const summary = await rescoreRun({
      store,
      environment,
      items: keyedPairs(items),
      judges,
      sandbox: {
        kind: sandbox.sandbox ?? 'local',
        image: sandbox.image,
        workdir: sandbox.workdir,
        docker: sandbox.docker,
        local: sandbox.local,
      },
      run,
      concurrency: input.concurrency,
    });
    if (meta && canonicalJson(judgeFingerprint(judges)) !== canonicalJson(meta.fingerprint_parts.judges ?? null)) {
      // The records are now graded by these judges: a resume must use them too (or say what changed).
      store.initRun({
        name: run,
        kind: meta.kind,
        config: { ...meta.config, eval: { ...stored, judges: chosen } },
        fingerprintParts: { ...meta.fingerprint_parts, judges: judgeFingerprint(judges) },
        force: true,
      });
    }
    const finished = finishEval(store, input.outDir, passThreshold, environment);
    const outputs = writeRunOutputs(store, input.outDir);
    return { summary, ...finished, trajectories: outputs.trajectories };
  } finally {
    store.close();
  }
}

async function* keyedPairs(items: AsyncIterable<{ key: string; item: unknown }>): AsyncGenerator<[string, unknown]> {
  for await (const keyed of items) yield [keyed.key, keyed.item];
}
