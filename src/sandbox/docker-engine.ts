import { homedir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import pLimit, { type LimitFunction } from 'p-limit';
import { errorMessage, SandboxError } from '../errors.js';

/** Engine clients by DOCKER_HOST value, so a changed environment gets a fresh connection. */
const clients = new Map<string, Promise<Docker>>();

/**
 * A dockerode client for the local engine, pinged once. dockerode reads DOCKER_HOST (unix://,
 * tcp://, ssh://, with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH) itself; without it, the socket at
 * ~/.docker/run/docker.sock or /var/run/docker.sock. No answer → SandboxError 'engine_unreachable'.
 */
export function connectDocker(): Promise<Docker> {
  const key = process.env.DOCKER_HOST ?? '';
  let client = clients.get(key);
  if (!client) {
    client = openClient();
    clients.set(key, client);
    // Only a working connection is worth keeping: the next call tries again.
    client.catch(() => clients.delete(key));
  }
  return client;
}

async function openClient(): Promise<Docker> {
  // dockerode (and its ssh2/protobuf dependencies) load only when a docker sandbox is asked for.
  const { default: DockerClient } = await import('dockerode');
  let docker: Docker;
  try {
    docker = new DockerClient();
    await withEngineRetry(() => docker.ping(), { attempts: 3 });
  } catch (error) {
    throw engineUnreachable(error);
  }
  return docker;
}

/** Where traj looked for the engine, in words a user can check. */
function engineAddress(): string {
  const host = process.env.DOCKER_HOST;
  if (host) return `DOCKER_HOST=${host}`;
  return `the default socket (${join(homedir(), '.docker', 'run', 'docker.sock')}, else /var/run/docker.sock; DOCKER_HOST is unset)`;
}

function engineUnreachable(error: unknown): SandboxError {
  const code = (error as NodeJS.ErrnoException).code;
  const hint =
    code === 'EACCES'
      ? 'permission denied: run traj as a member of the docker group (or root)'
      : 'start one with `dockerd` (scripts/start-dockerd.sh does it and waits), or point DOCKER_HOST at a running engine';
  return new SandboxError(`no Docker engine answered at ${engineAddress()}: ${errorMessage(error)}; ${hint}`, {
    code: 'engine_unreachable',
    retryable: true,
    cause: error,
  });
}

/** The HTTP status the engine answered with, when the error came from the engine. */
export function engineStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

const TRANSIENT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * Worth another try: a dropped connection or an engine 5xx (busy daemon, containerd hiccup).
 * A 404 or a 'not running' is an answer, not a hiccup.
 */
export function isTransientEngineError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && TRANSIENT_CODES.has(code)) return true;
  const message = errorMessage(error);
  if (/socket hang up/i.test(message)) return true;
  const status = engineStatus(error);
  return status !== undefined && status >= 500 && !/no such|is not running/i.test(message);
}

export interface RetryOptions {
  attempts?: number;
  /** Extra errors worth retrying, e.g. 409 "removal already in progress" during removal. */
  alsoRetry?: (error: unknown) => boolean;
}

/** Run an engine call, retrying transient failures with a short exponential backoff. */
export async function withEngineRetry<T>(operation: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 4;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const retry = isTransientEngineError(error) || (options.alsoRetry?.(error) ?? false);
      if (!retry || attempt >= attempts) throw error;
      await delay(100 * 3 ** (attempt - 1));
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

const limiters = new Map<string, LimitFunction>();

/**
 * One semaphore per purpose for the whole process (all sandboxes share the engine); the
 * latest configured concurrency wins.
 */
export function engineLimiter(purpose: 'create' | 'exec', concurrency: number): LimitFunction {
  let limiter = limiters.get(purpose);
  if (!limiter) {
    limiter = pLimit(concurrency);
    limiters.set(purpose, limiter);
  } else if (limiter.concurrency !== concurrency) {
    limiter.concurrency = concurrency;
  }
  return limiter;
}
