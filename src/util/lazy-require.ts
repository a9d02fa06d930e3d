import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use, synchronously: worker threads and the CLI start without
 * paying for what most runs never call (yaml ~20 ms, better-sqlite3 ~9 ms per thread).
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
