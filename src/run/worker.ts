import { setMaxListeners } from 'node:events';
import { BroadcastChannel, threadId, workerData } from 'node:worker_threads';
import type { RolloutOutcome, RolloutTask } from './rollout.js';
import { createThreadServices } from './worker-services.js';
import { retryText } from './retry-text.js';
import { ROLLOUT_STARTS_PER_TURN, StartPacer } from './start-pacer.js';
import { runThreadRollout } from './thread-rollout.js';
import { toolsKeyOf } from './tool-specs-memo.js';

/** The piscina worker: runs rollouts concurrently inside this thread. */
const interrupts = new Map<string, AbortController>();
const channels = new Map<string, BroadcastChannel>();
// A model call being retried is told to the main thread, so progress can show what the server says.
const services = createThreadServices({
  deferTeardowns: true,
  onRetry: (event) => {
    const message: ControlMessage = {
      type: 'retry',
      attempt: event.attempt,
      delayMs: event.delayMs,
      message: retryText(event.failure),
    };
    for (const channel of channels.values()) channel.postMessage(message);
  },
});

/**
 * Main → workers: interrupt rollouts, or close per-thread services (MCP servers).
 * Workers → main: acknowledgements, and model calls being retried.
 */
export type ControlMessage =
  | { type: 'interrupt' }
  | { type: 'close' }
  | { type: 'loaded'; thread: number }
  | { type: 'joined'; thread: number }
  | { type: 'closed'; thread: number }
  | { type: 'retry'; attempt: number; delayMs: number; message: string };

/** What the pool hands each thread at start (piscina's `workerData`). */
export interface PoolWorkerData {
  control: string;
}

announceLoaded(workerData as PoolWorkerData | undefined);

/**
 * This module's body runs once every module it imports has loaded. Until then a thread must not
 * be terminated: Node 20 aborts the whole process (a V8 fatal error) when a thread is stopped
 * while it instantiates its modules, so the pool waits for this before it closes.
 */
function announceLoaded(data: PoolWorkerData | undefined): void {
  if (!data?.control) return;
  const channel = new BroadcastChannel(data.control);
  channel.postMessage({ type: 'loaded', thread: threadId } satisfies ControlMessage);
  channel.close();
}

/** Each pool has its own control channel, so two runs in one process never stop each other. */
function controllerFor(channelName: string): AbortController {
  let controller = interrupts.get(channelName);
  if (controller) return controller;
  controller = new AbortController();
  // Every rollout in flight in this thread listens to it: dozens at once is expected, not a leak.
  setMaxListeners(0, controller.signal);
  interrupts.set(channelName, controller);
  const channel = new BroadcastChannel(channelName);
  channel.unref();
  channels.set(channelName, channel);
  channel.onmessage = (event: unknown) => {
    const message = (event as { data: ControlMessage }).data;
    if (message.type === 'interrupt') interrupts.get(channelName)?.abort(new Error('interrupted by the user'));
    if (message.type === 'close')
      void services
        .close()
        .finally(() => channel.postMessage({ type: 'closed', thread: threadId } satisfies ControlMessage));
  };
  channel.postMessage({ type: 'joined', thread: threadId } satisfies ControlMessage);
  return controller;
}

/** A rollout as the pool sends it: its control channel, the shared request counter and endpoint gates ride along. */
export type PoolTask = RolloutTask & {
  control: string;
  requests?: Int32Array;
  gates?: Record<string, SharedArrayBuffer>;
};

/** A first wave of hundreds of tasks begins a few per turn, so its requests leave as it is set up. */
const pacer = new StartPacer(ROLLOUT_STARTS_PER_TURN);

export default async function runRollout(task: PoolTask): Promise<RolloutOutcome> {
  return withSharedTools(await runThreadRollout(task, task, { services, pacer }, controllerFor(task.control).signal));
}

/** Tool sets (by their names) whose specs this thread already sent to the main thread. */
const sentTools = new Set<string>();

/**
 * Most rollouts of a run offer the same tools: their specs (JSON Schemas, descriptions: kilobytes)
 * cross to the main thread once per thread, later outcomes carry only their key (see pool.ts).
 */
function withSharedTools(outcome: RolloutOutcome): RolloutOutcome {
  const toolsKey = toolsKeyOf(outcome.tools);
  if (sentTools.has(toolsKey)) return { ...outcome, tools: [], toolsKey };
  sentTools.add(toolsKey);
  return { ...outcome, toolsKey };
}
