import { Redis } from 'ioredis';
import { ConfigError, RunError } from '../errors.js';

/** A parsed `redis://HOST:PORT[/DB]` (or `rediss://` for TLS). */
export interface QueueAddress {
  url: string;
  host: string;
  port: number;
  db: number;
  tls: boolean;
}

export function parseQueueUrl(url: string): QueueAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`--queue ${url}: not a URL; expected redis://HOST:PORT[/DB]`, { code: 'cli_usage' });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError(
      `--queue ${url}: expected redis://HOST:PORT[/DB] (or rediss:// for TLS), got ${parsed.protocol}`,
      { code: 'cli_usage' },
    );
  }
  const path = parsed.pathname.replace(/^\//, '');
  const db = path === '' ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0)
    throw new ConfigError(`--queue ${url}: the database after the port must be a number, got '${path}'`, {
      code: 'cli_usage',
    });
  return {
    url,
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * One ioredis connection. `maxRetriesPerRequest: null` is what BullMQ needs for its blocking
 * commands: a Redis restart then pauses commands until it is back instead of failing them.
 */
export function connect(address: QueueAddress): Redis {
  return new Redis(address.url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
}

/** Fail fast with a clear message when nothing answers at the address. */
export async function checkReachable(address: QueueAddress, timeoutMs = 5000): Promise<void> {
  const probe = new Redis(address.url, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new RunError(
      `--queue ${address.url}: no Redis answers there (${(error as Error).message}); start one (redis-server --port ${address.port}) or fix the URL`,
      {
        code: 'queue_unreachable',
      },
    );
  } finally {
    probe.disconnect();
  }
}

/** Connection options BullMQ builds its own connections from (a Worker needs dedicated blocking ones). */
export function bullConnection(address: QueueAddress): {
  host: string;
  port: number;
  db: number;
  tls?: object;
  maxRetriesPerRequest: null;
} {
  return {
    host: address.host,
    port: address.port,
    db: address.db,
    ...(address.tls ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}
