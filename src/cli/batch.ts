import { ConfigError } from '../errors.js';
import { startLocalPool } from '../run/pool.js';
import type { CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { exitCodeHelp } from './exit-codes.js';

export const command: CommandDefinition = {
  name: 'batch',
  summary: 'turn a prompt dataset into a trajectory dataset (resumable)',
  usage: 'traj batch --dataset FILE --run NAME [--distribution NAME | --toolsets a,b] [options]',
  options: RUN_OPTIONS,
  details: `Examples:
  traj batch --dataset datasets/sample/prompts.jsonl --run demo --distribution development
  traj batch --config run.yaml --concurrency 64          # flags override the config file
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
    const config = runConfigFrom(values);
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
      return await executeBatch({ values, config: { ...config, dataset: config.dataset }, resolved, pool, log });
    } finally {
      await pool?.pool.close();
      await resolved.scripted?.close();
    }
  },
};
