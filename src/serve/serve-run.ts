import type { EnvironmentRunInput } from '../run/environment-run.js';
import { runEnvironment } from '../run/environment-run.js';
import type { ExecuteRunResult } from '../run/execute-run.js';
import type { ChatTokenizer } from '../tokens/index.js';
import { runAtroposPusher, type AtroposOptions } from './atropos-client.js';
import { startServeApi } from './http-api.js';
import type { Policy } from './policy.js';
import { Serving } from './serving.js';

export interface ServeInput {
  /** The environment run as eval runs it; kind, stream and the rollouts' events are set here. */
  run: Omit<EnvironmentRunInput, 'kind' | 'stream'>;
  policy: Policy;
  host: string;
  port: number;
  maxAhead: number;
  maxStaleness: number;
  tokenizer?: ChatTokenizer;
  maxTokens?: number;
  /** Post groups to an Atropos API server as one of its environments. */
  atropos?: Omit<AtroposOptions, 'stop' | 'onNotice' | 'groupSize'>;
  onListening?: (url: string) => void;
  onNotice?: (line: string) => void;
}

/**
 * `traj serve`: the eval pipeline driven by a trainer's requests. The HTTP API listens before the
 * pool starts (pulls wait until the store is open); the run ends when the user stops it or the
 * pipeline halts (a run-level fault), and then waiting pulls get what is ready.
 */
export async function serveEnvironment(input: ServeInput): Promise<ExecuteRunResult> {
  const ended = new AbortController();
  const userStop = input.run.controls.stop;
  const stop = userStop ? AbortSignal.any([userStop, ended.signal]) : ended.signal;
  const serving = new Serving({
    policy: input.policy,
    samples: input.run.samples,
    maxAhead: input.maxAhead,
    maxStaleness: input.maxStaleness,
    tokenizer: input.tokenizer,
    maxTokens: input.maxTokens,
    stop,
    onNotice: input.onNotice,
  });
  const api = await startServeApi(serving, { host: input.host, port: input.port });
  input.onListening?.(api.url);
  const pusher = input.atropos
    ? runAtroposPusher(serving, {
        ...input.atropos,
        groupSize: input.run.samples,
        stop,
        onNotice: input.onNotice,
      }).catch((error: unknown) => input.onNotice?.(`Atropos: ${String(error)}`))
    : undefined;
  const onEvent = input.run.controls.onEvent;
  try {
    return await runEnvironment({
      ...input.run,
      kind: 'serve',
      stream: serving.stream,
      controls: {
        ...input.run.controls,
        onEvent: (event) => {
          serving.onEvent(event);
          onEvent?.(event);
        },
      },
    });
  } finally {
    ended.abort();
    await pusher;
    await api.close();
  }
}
