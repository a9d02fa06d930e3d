import { ConfigError } from '../errors.js';
import type { RemoteTransport } from '../run/execute-run.js';
import type { RunConfig } from '../run/run-config.js';
import { integerOption, stringOption, type OptionSpec, type ParsedCommand } from './command.js';

/** Flags of a queued run (batch, eval, bench): the coordinator side of `traj worker`. */
export const QUEUE_OPTIONS: Record<string, OptionSpec> = {
  queue: {
    type: 'string',
    value: 'URL',
    description:
      'run the rollouts on `traj worker` processes through Redis (redis://HOST:PORT[/DB]); this process keys, lands and writes outputs',
  },
  stop: {
    type: 'boolean',
    description:
      'with --queue: drain the run (workers drop its jobs, its jobs and settings leave Redis); landed results stay',
  },
  'stalled-interval': {
    type: 'string',
    value: 'S',
    description: 'with --queue: seconds without a worker heartbeat before its job goes to another worker (default 30)',
  },
  'max-in-flight': {
    type: 'string',
    value: 'N',
    description:
      'with --queue: rollouts in flight across all workers, so requests to the endpoint at once (default: no cap beyond --concurrency)',
  },
  'per-minute': {
    type: 'string',
    value: 'N',
    description: 'with --queue: rollouts started per minute across all workers (default: no limit)',
  },
};

export function queueFlags(values: ParsedCommand['values']): RunConfig['queue'] {
  const queue = {
    url: stringOption(values, 'queue'),
    stop: values.stop === true ? true : undefined,
    stalled_interval: integerOption(values, 'stalled-interval'),
    max_in_flight: integerOption(values, 'max-in-flight'),
    per_minute: integerOption(values, 'per-minute'),
  };
  const given = Object.fromEntries(Object.entries(queue).filter(([, value]) => value !== undefined));
  return Object.keys(given).length > 0 ? given : undefined;
}

/** The queue transport of a run, or undefined to run on the local pool. The queue room loads only when used. */
export function queueTransport(config: RunConfig): RemoteTransport | undefined {
  const queue = config.queue;
  if (!queue?.url) {
    if (queue && Object.keys(queue).length > 0)
      throw new ConfigError(`--${Object.keys(queue)[0]!.replace('_', '-')} needs --queue URL`, { code: 'cli_usage' });
    return undefined;
  }
  const url = queue.url;
  return {
    async open({ store, settings, fingerprint, maxAttempts }) {
      const { QueueCoordinator } = await import('../queue/index.js');
      const coordinator = await QueueCoordinator.open({
        url,
        store,
        settings,
        fingerprint,
        maxAttempts,
        stalledSeconds: queue.stalled_interval,
        maxInFlight: queue.max_in_flight,
        perMinute: queue.per_minute,
      });
      const close = coordinator.close.bind(coordinator);
      coordinator.close = async (finished) => {
        await close(finished);
        // BullMQ's connections to a Redis that lost its data can linger: once the command is done, exit anyway.
        setTimeout(() => process.exit(), 30_000).unref();
      };
      return coordinator;
    },
    stop: queue.stop
      ? async () => {
          const { stopQueuedRun } = await import('../queue/index.js');
          const { jobs } = await stopQueuedRun(url, config.run);
          return `--stop: run '${config.run}' drained from ${url} (${jobs} jobs removed; workers interrupt what they ran of it). Landed results stay in the store; rerun without --stop to queue the unfinished prompts.`;
        }
      : undefined,
  };
}
