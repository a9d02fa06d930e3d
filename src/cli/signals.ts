/**
 * SIGINT/SIGTERM handling for long runs: the first signal stops dispatching (in-flight work gets a
 * grace period), the second interrupts what is still running at once.
 */
export interface StopSignals {
  stop: AbortSignal;
  interruptNow: AbortSignal;
  dispose(): void;
}

export function installStopSignals(onFirst: (signal: string) => void, onSecond: (signal: string) => void): StopSignals {
  const stop = new AbortController();
  const interruptNow = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      stop.abort();
      onFirst(signal);
    } else if (!interruptNow.signal.aborted) {
      interruptNow.abort();
      onSecond(signal);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    stop: stop.signal,
    interruptNow: interruptNow.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** Resolves with the first SIGINT or SIGTERM: how a serving command (view, mock-server) waits to stop. */
export function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
