import { resolveEnvironmentModule } from '../eval/load-environment.js';
import { rescoreStoredRun } from '../report/rescore-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import { integerOption, stringOption, type CommandDefinition, type ParsedCommand } from './command.js';
import { EVAL_OPTIONS, numberOption, rescoreJudgeSettings } from './eval-options.js';
import { printResult, runEval } from './eval-run.js';
import { exitCodeHelp } from './exit-codes.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** `--rescore RUN`: rewards and judging again over the stored trajectories; no rollouts, no policy calls. */
async function rescore(values: ParsedCommand['values'], run: string): Promise<number> {
  const name = stringOption(values, 'env');
  const rescored = await rescoreStoredRun({
    run,
    checkpointsDir: stringOption(values, 'checkpoints') ?? 'checkpoints',
    environmentModule: name ? resolveEnvironmentModule(name) : undefined,
    judges: (stored, config, policy) => rescoreJudgeSettings(values, stored.judges, config, policy),
    passThreshold: numberOption(values, 'pass-threshold'),
    concurrency: integerOption(values, 'concurrency') ?? 16,
    outDir: stringOption(values, 'out') ?? defaultOutputDirectory(run),
    onStart(environment, judges) {
      log(
        `[traj] rescoring '${run}' with ${environment.name} ${environment.version}${judges ? `, judged by ${judges.endpoints.map((judge) => judge.model).join(' + ')}` : ''} (no rollouts; ${environment.rescore === 'replay' ? 'each reward gets a fresh sandbox with the recorded tool calls replayed' : 'no sandbox'})`,
      );
    },
  });
  const { summary } = rescored;
  log(
    `[traj] rescored ${summary.rescored} rollouts (${summary.rewardErrors} reward errors; judge: ${summary.judgeCalls} new verdicts, ${summary.judgeCacheHits} from the cache)${summary.missingItems > 0 ? `; ${summary.missingItems} stored rollouts kept as they were: the environment no longer yields their items` : ''}`,
  );
  printResult(rescored, rescored.trajectories);
  return 0;
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
