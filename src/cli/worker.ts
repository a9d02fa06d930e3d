import { ConfigError } from '../errors.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';
import { installStopSignals } from './signals.js';

export const command: CommandDefinition = {
  name: 'worker',
  summary: 'take rollout jobs of queued runs (traj batch|eval|bench --queue URL) from Redis and run them here',
  usage: 'traj worker --queue redis://HOST:PORT[/DB] [--concurrency N] [--threads N] [--sandbox local|docker]',
  options: {
    queue: { type: 'string', value: 'URL', description: 'the Redis the coordinator queues on: redis://HOST:PORT[/DB]' },
    concurrency: { type: 'string', value: 'N', description: 'rollouts this worker runs at once (default 8)' },
    threads: {
      type: 'string',
      value: 'N',
      description: 'worker threads of the local rollout pool (default: CPU cores)',
    },
    sandbox: {
      type: 'string',
      value: 'local|docker',
      description: 'the sandbox this machine offers (docker: its own engine); a run using another is refused',
    },
  },
  details: `The worker serves every run announced in that Redis whose code version and fingerprint (tool
schemas, environment module) match its own; it refuses the others and says which part differs,
here and to the coordinator (which stops with exit 4, naming why, when every worker refuses its run).
Each job is one rollout, run on the same pool and executor as a local run (sandboxes, tools,
environments, judges, MCP servers); its outcome is the job's result, landed by the coordinator.
The model endpoint's key is read from this machine's environment (e.g. OPENAI_API_KEY).
SIGINT: stop taking jobs and finish the running ones; a second SIGINT, or SIGTERM at once,
interrupts them (their jobs then go to another worker after the run's --stalled-interval).
Example:
  traj worker --queue redis://10.0.0.5:6379 --concurrency 16 --sandbox docker`,
  async run({ values }) {
    const url = stringOption(values, 'queue');
    if (!url)
      throw new ConfigError(
        'missing --queue redis://HOST:PORT[/DB] (where the coordinator, traj batch|eval|bench --queue, queues)',
        { code: 'cli_usage' },
      );
    const sandbox = stringOption(values, 'sandbox');
    if (sandbox !== undefined && sandbox !== 'local' && sandbox !== 'docker')
      throw new ConfigError(`flag --sandbox: expected local or docker, got '${sandbox}'`, { code: 'cli_usage' });
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const { QueueWorker } = await import('../queue/index.js');
    const worker = new QueueWorker({
      url,
      concurrency: integerOption(values, 'concurrency') ?? 8,
      threads: integerOption(values, 'threads'),
      sandbox,
      log,
    });
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const signals = installStopSignals(
      () => {
        log('[traj worker] stopping: no new jobs; running rollouts finish (signal again to interrupt them)');
        void worker.stop(true).then(finish);
      },
      () => {
        log('[traj worker] interrupting running rollouts');
        void worker.stop(false).then(finish);
      },
    );
    try {
      await worker.start();
      log(`[traj worker] waiting for jobs at ${url}`);
      await finished;
      log(`[traj worker] stopped after ${worker.completed} rollouts`);
      return 0;
    } finally {
      signals.dispose();
    }
  },
};
