/**
 * SIGINT/SIGTERM handling for long runs: the first SIGINT stops dispatching (in-flight work gets a
 * grace period), a second interrupts what is still running at once. SIGTERM does both at once:
 * it is what supervisors send (docker stop, Kubernetes, CI) with a SIGKILL ~10 s behind it, so
 * in-flight work is interrupted, lands as pending and the process exits, whatever its tools do.
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
    const first = !stop.signal.aborted;
    if (first) stop.abort();
    if (first && signal !== 'SIGTERM') onFirst(signal);
    else if (!interruptNow.signal.aborted) {
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
