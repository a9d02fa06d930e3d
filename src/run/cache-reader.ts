import type Database from 'better-sqlite3';
import { lazyRequire } from '../util/lazy-require.js';

const sqlite = lazyRequire<typeof Database>('better-sqlite3');

/**
 * A read-only lookup in a run store's judge or web cache, for worker threads (only the main thread
 * writes the store; WAL lets readers beside the writer). Null when there is no store or no table
 * yet. better-sqlite3 loads when a rollout first consults a cache, not with every worker thread.
 */
export function openCacheReader(path: string, cache: 'judge' | 'web'): ((key: string) => string | undefined) | null {
  try {
    const Sqlite = sqlite();
    const db = new Sqlite(path, { readonly: true, fileMustExist: true });
    const sql =
      cache === 'judge' ? 'SELECT verdict FROM judge_cache WHERE key = ?' : 'SELECT value FROM web_cache WHERE key = ?';
    const statement = db.prepare<[string], string>(sql).pluck();
    return (key) => statement.get(key);
  } catch {
    return null;
  }
}
