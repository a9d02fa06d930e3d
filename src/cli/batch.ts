import { ConfigError } from '../errors.js';
import { agentCliBatchConfig } from '../run/agent-cli-run.js';
import { startLocalPool } from '../run/pool.js';
import { stringOption, type CommandDefinition, type OptionSpec } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { exitCodeHelp } from './exit-codes.js';

const BATCH_OPTIONS: Record<string, OptionSpec> = {
  ...RUN_OPTIONS,
  agent: {
    type: 'string',
    value: 'model|NAME|FILE',
    description:
      "the policy: traj's own agent (model, the default), or an agent CLI (qwen-code, codex, claude-code, TRAJ_HOME/agents/NAME.yaml, or a YAML file) run in Docker with the model behind traj's recording proxy: needs --sandbox docker; --toolsets, --distribution, --system, --ephemeral-system-prompt, --prefill, --memory and --skills are refused (docs/agents.md)",
  },
};

export const command: CommandDefinition = {
  name: 'batch',
  summary: 'turn a prompt dataset into a trajectory dataset (resumable)',
  usage:
    'traj batch --dataset FILE --run NAME [--distribution NAME | --toolsets a,b] [options]\n       traj batch --dataset FILE --run NAME --agent NAME|FILE --sandbox docker [options]',
  options: BATCH_OPTIONS,
  details: `Examples:
  traj batch --dataset datasets/sample/prompts.jsonl --run demo --distribution development
  traj batch --config run.yaml --concurrency 64          # flags override the config file
  traj batch --dataset prompts.jsonl --run q1 --agent qwen-code --sandbox docker   # Qwen Code is the policy
Resume: run the same command again; finished prompts are skipped, failed ones retried until --max-attempts
recorded failures (a kill or a run-level fault uses no attempt); --retry-failed gives those failed for good fresh attempts.
Rate limits: model requests in flight adapt per endpoint (AIMD, up to --concurrency or endpoint.concurrency): a 429/503
lowers the level, retry-after pauses new requests, successes raise it again; the progress line shows it (conc 37/64).
A 429 never uses an attempt or max_retries; one refused past endpoint.max_rate_limit_wait_ms stops the run
(model_rate_limited, exit 4). endpoint.adaptive: false keeps a fixed cap.
Before the first rollout a preflight checks the key, the endpoint (GET /models) and, for --sandbox docker, the image.
Outputs: checkpoints/NAME.sqlite (the source of truth), datasets/NAME/trajectories.jsonl and statistics.json
(or --out DIR). A datasets/NAME/ that holds other files but no run outputs (e.g. the shipped datasets/sample/)
is refused: choose another run name or --out.
${exitCodeHelp()}`,
  async run({ values }) {
    const agent = stringOption(values, 'agent');
    // A definition is YAML, checked with the eval agents' names: loaded only when an agent is named,
    // so that a plain batch starts its threads before loading YAML or the SDK.
    const agentCli =
      agent !== undefined && agent !== 'model'
        ? (await import('./agent-option.js')).batchAgentOption(values)
        : undefined;
    const config = agentCli ? agentCliBatchConfig(runConfigFrom(values), agentCli) : runConfigFrom(values);
    if (!config.dataset)
      throw new ConfigError('missing --dataset FILE (JSONL, Parquet, Arrow or hf://datasets/...)', {
        code: 'cli_usage',
      });
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const resolved = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log,
    });
    // The threads load openai, zod and the tools while this thread loads the rest of the run: the
    // modules below are imported only now for that reason.
    const pool = config.queue?.url
      ? undefined
      : startLocalPool({
          workers: config.workers,
          concurrency: config.concurrency,
          endpoint: resolved.endpoint,
          environment: false,
        });
    try {
      const { executeBatch } = await import('./batch-execute.js');
      return await executeBatch({
        values,
        config: { ...config, dataset: config.dataset },
        agentCli,
        resolved,
        pool,
        log,
      });
    } finally {
      await pool?.pool.close();
      await resolved.scripted?.close();
    }
  },
};
