import { existsSync } from 'node:fs';
import type { Endpoint } from '../config/endpoint.js';
import { loadEnvironmentConfig } from '../eval/environment-config.js';
import { loadEnvironment, resolveEnvironmentModule } from '../eval/load-environment.js';
import { rescoreRun } from '../report/rescore.js';
import { ConfigError } from '../errors.js';
import { keyedItems } from '../run/environment-entries.js';
import { storePathFor } from '../run/execute-run.js';
import { defaultOutputDirectory, writeRunOutputs } from '../run/outputs.js';
import { RunStore } from '../run/store.js';
import { canonicalJson } from '../util/hash.js';
import { integerOption, stringOption, type CommandDefinition, type ParsedCommand } from './command.js';
import {
  EVAL_OPTIONS,
  judgeFingerprint,
  numberOption,
  rescoreJudgeSettings,
  StoredEvalSchema,
} from './eval-options.js';
import { exitCodeHelp } from './exit-codes.js';
import { finishEval, printResult, runEval } from './eval-run.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** `--rescore RUN`: rewards and judging again over the stored trajectories; no rollouts, no policy calls. */
async function rescore(values: ParsedCommand['values'], run: string): Promise<number> {
  const checkpoints = stringOption(values, 'checkpoints') ?? 'checkpoints';
  const storePath = storePathFor(checkpoints, run);
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
    const name = stringOption(values, 'env');
    const modulePath = name ? resolveEnvironmentModule(name) : stored.environment_module;
    const environment = await loadEnvironment(modulePath);
    const environmentConfig = loadEnvironmentConfig(modulePath);
    const policy = meta?.config.endpoint as Endpoint | undefined;
    const judges = rescoreJudgeSettings(values, stored.judges, environmentConfig.judge, policy);
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
    const passThreshold = numberOption(values, 'pass-threshold') ?? stored.pass_threshold;
    log(
      `[traj] rescoring '${run}' with ${environment.name} ${environment.version}${judges ? `, judged by ${judges.endpoints.map((judge) => judge.model).join(' + ')}` : ''} (no rollouts; ${environment.rescore === 'replay' ? 'each reward gets a fresh sandbox with the recorded tool calls replayed' : 'no sandbox'})`,
    );
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
      concurrency: integerOption(values, 'concurrency') ?? 16,
    });
    if (meta && canonicalJson(judgeFingerprint(judges)) !== canonicalJson(meta.fingerprint_parts.judges ?? null)) {
      // The records are now graded by these judges: a resume must use them too (or say what changed).
      store.initRun({
        name: run,
        kind: meta.kind,
        config: { ...meta.config, eval: { ...stored, judges } },
        fingerprintParts: { ...meta.fingerprint_parts, judges: judgeFingerprint(judges) },
        force: true,
      });
    }
    const outDir = stringOption(values, 'out') ?? defaultOutputDirectory(run);
    const finished = finishEval(store, outDir, passThreshold, environment);
    const outputs = writeRunOutputs(store, outDir);
    log(
      `[traj] rescored ${summary.rescored} rollouts (${summary.rewardErrors} reward errors; judge: ${summary.judgeCalls} new verdicts, ${summary.judgeCacheHits} from the cache)${summary.missingItems > 0 ? `; ${summary.missingItems} stored rollouts kept as they were: the environment no longer yields their items` : ''}`,
    );
    printResult(finished, outputs.trajectories);
    return 0;
  } finally {
    store.close();
  }
}

async function* keyedPairs(items: AsyncIterable<{ key: string; item: unknown }>): AsyncGenerator<[string, unknown]> {
  for await (const keyed of items) yield [keyed.key, keyed.item];
}

export const command: CommandDefinition = {
  name: 'eval',
  summary:
    'run an environment: K rollouts per item, rewards over the sandbox, LLM judges, metrics and a report (resumable)',
  usage:
    'traj eval --env NAME|PATH --run NAME [--samples K] [--limit N] [--agent model|noop|oracle] [--judge-model M ...] [batch options]\n       traj eval --rescore RUN [--judge-model M ...]',
  options: EVAL_OPTIONS,
  details: `Examples:
  traj eval --env gsm8k --run gsm8k-dev --limit 50 --base-url http://127.0.0.1:8000/v1 --model qwen
  traj eval --env file-task --run files --samples 4 --toolsets terminal,file
  traj eval --env rubric --run open --judge-model gpt-4o-mini,gpt-4.1-mini --judge-base-url https://api.openai.com/v1
  traj eval --rescore open --judge-model gpt-4.1     # new judge, same trajectories, no policy calls
Defaults come from environments/<name>/config.yaml; flags and --config override them.
Resume: run the same command again (more --samples adds samples to every item).
Outputs: checkpoints/NAME.sqlite, datasets/NAME/trajectories.jsonl (with reward, scores, group, advantage), statistics.json, report.json, report.md.
Reward errors are results, not failures. Before the first rollout a preflight checks the key, the endpoint and, for docker, the images.
${exitCodeHelp()}`,
  async run({ values }) {
    const rescoreRunName = stringOption(values, 'rescore');
    return rescoreRunName ? rescore(values, rescoreRunName) : runEval(values);
  },
};
