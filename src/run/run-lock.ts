import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type Database from 'better-sqlite3';
import { RunError } from '../errors.js';

/**
 * One traj process per run: the run_lock row of the store names the process holding it. A lock
 * whose process is gone (same host, pid not alive or reused) is taken over, so a SIGKILLed run
 * never blocks its rerun.
 */

/** The process that holds a run: one traj process per run store at a time. */
export interface RunLock {
  pid: number;
  host: string;
  started_at: string;
}

/** Take the run for this process, or throw naming the process that holds it. */
export function acquireRunLock(db: Database.Database, path: string): void {
  const me = {
    pid: process.pid,
    host: hostname(),
    process_start: processStart(process.pid),
    started_at: new Date().toISOString(),
  };
  db.transaction(() => {
    const holder = db.prepare('SELECT pid, host, process_start, started_at FROM run_lock WHERE id = 1').get() as
      | (RunLock & { process_start: string | null })
      | undefined;
    if (holder && !(holder.pid === me.pid && holder.host === me.host) && isHeld(holder)) {
      throw new RunError(
        `run store ${path} is in use by process ${holder.pid} on host ${holder.host} (since ${holder.started_at}); ` +
          'one traj process per run: wait for it to finish or stop it, then run the command again',
        { code: 'run_locked', details: { pid: holder.pid, host: holder.host, started_at: holder.started_at } },
      );
    }
    db.prepare('INSERT OR REPLACE INTO run_lock (id, pid, host, process_start, started_at) VALUES (1, ?, ?, ?, ?)').run(
      me.pid,
      me.host,
      me.process_start,
      me.started_at,
    );
  }).immediate();
}

export function releaseRunLock(db: Database.Database): void {
  db.prepare('DELETE FROM run_lock WHERE id = 1 AND pid = ? AND host = ?').run(process.pid, hostname());
}

export function runLockHolder(db: Database.Database): RunLock | undefined {
  return db.prepare('SELECT pid, host, started_at FROM run_lock WHERE id = 1').get() as RunLock | undefined;
}

/** The start time of a process (Linux /proc), so a pid reused by another process is not mistaken for the holder. */
function processStart(pid: number): string | null {
  try {
    // Field 22 of /proc/PID/stat, counted after the "(comm)" that may itself hold spaces.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether a lock's process still runs. On another host it cannot be checked, so it is held. */
function isHeld(holder: { pid: number; host: string; process_start: string | null }): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = processStart(holder.pid);
  return holder.process_start === null || start === null || start === holder.process_start;
}
