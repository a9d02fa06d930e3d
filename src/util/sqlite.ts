import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** How long a write waits for another process's write lock before "database is locked". */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * A SQLite database for one writer and concurrent readers: WAL (readers never block the writer),
 * NORMAL sync (durable across process crashes, which is what resume needs), a busy timeout.
 * Writers in several processes (two `traj chat` on one TRAJ_HOME) should use IMMEDIATE
 * transactions, which wait out the busy timeout for the lock.
 */
export function openDatabase(path: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  withBusyRetry(() => db.pragma('journal_mode = WAL'));
  db.pragma('synchronous = NORMAL');
  return db;
}

/**
 * Run `step`, retrying while SQLite answers SQLITE_BUSY, up to the busy timeout. Switching a new
 * file to WAL while another process does the same returns SQLITE_BUSY at once, without calling
 * the busy handler, so the timeout alone does not cover two processes creating one database.
 */
function withBusyRetry<T>(step: () => T): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      return step();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      // A synchronous sleep: better-sqlite3 is synchronous, and this runs once per open at most.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
    }
  }
}
