import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { errorMessage } from '../errors.js';
import { delay, withEngineRetry } from './docker-engine.js';

/** The exit code, once the engine has noticed the process ended (a few ms after the stream). */
export async function exitCodeOf(exec: Docker.Exec, polls = 40): Promise<number | undefined> {
  for (let attempt = 0; attempt < polls; attempt++) {
    const info = await withEngineRetry(() => exec.inspect());
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await delay(50);
  }
  return undefined;
}

export function streamClosed(stream: Duplex): Promise<void> {
  return new Promise((done) => {
    if (stream.destroyed || stream.readableEnded) return done();
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', () => done());
  });
}

/** Whether the stream ended or closed within `ms`. */
export async function closedWithin(stream: Duplex, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((done) => {
    timer = setTimeout(() => done(false), ms);
  });
  try {
    return await Promise.race([streamClosed(stream).then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The engine's answer for a container removed or stopped (outside traj, or by its disposal). */
export function containerGone(error: unknown): boolean {
  return /no such container|no such exec|is not running/i.test(errorMessage(error));
}
