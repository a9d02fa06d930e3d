import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export interface RedisProcess {
  port: number;
  url: string;
  child: ChildProcess;
  /** Stop this redis-server (by its PID) and wait for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A free loopback port: bind port 0, read it, let it go. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A real redis-server on 127.0.0.1 (Debian's package), stopped by PID at the end of the test.
 * `persistence`: an append-only file in that folder, so a restart keeps the data.
 */
export async function startRedis(options: { port?: number; persistence?: string } = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--daemonize', 'no'];
  if (options.persistence) args.push('--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.persistence);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited at start:\n${output}`);
    if (await answers(url)) break;
    if (tries > 200) throw new Error(`redis-server did not answer on port ${port}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Every key Redis holds now (a small test database only). */
export async function redisKeys(url: string): Promise<string[]> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return (await client.keys('*')).sort();
  } finally {
    client.disconnect();
  }
}
