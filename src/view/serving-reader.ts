import type Database from 'better-sqlite3';

/**
 * What `traj view` shows of a serving run (`traj serve`), read from the store's `served_groups`
 * table (src/run/served-groups.ts owns it): seq, policy_version, status, mean_reward, staleness,
 * ready_at. Stores of other runs have no such table, or an empty one: then there is nothing to show.
 */
export interface ServingStats {
  statuses: Record<string, number>;
  /** Groups finished in the last 10 minutes, per minute; and over the whole run. */
  perMinuteRecent: number;
  perMinuteOverall: number | null;
  byVersion: { version: number; groups: number; mean_reward: number | null; stale: number }[];
  /** Versions behind at delivery: how many delivered groups were 0, 1, … behind. */
  staleness: { behind: number; groups: number }[];
  currentVersion: number | null;
}

const RECENT_MINUTES = 10;

export function servingStats(db: Database.Database, now = Date.now()): ServingStats | null {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'served_groups'").get();
  if (!table) return null;
  const statusRows = db.prepare('SELECT status, COUNT(*) AS n FROM served_groups GROUP BY status').all() as {
    status: string;
    n: number;
  }[];
  if (statusRows.length === 0) return null;
  const times = db
    .prepare('SELECT MIN(ready_at) AS first, MAX(ready_at) AS last, COUNT(ready_at) AS n FROM served_groups')
    .get() as { first: string | null; last: string | null; n: number };
  const since = new Date(now - RECENT_MINUTES * 60_000).toISOString();
  const recent = db.prepare('SELECT COUNT(*) FROM served_groups WHERE ready_at >= ?').pluck().get(since) as number;
  const span = times.first && times.last ? (Date.parse(times.last) - Date.parse(times.first)) / 60_000 : 0;
  return {
    statuses: Object.fromEntries(statusRows.map((row) => [row.status, row.n])),
    perMinuteRecent: recent / RECENT_MINUTES,
    perMinuteOverall: span > 0 ? times.n / span : null,
    byVersion: db
      .prepare(
        `SELECT policy_version AS version, COUNT(*) AS groups, AVG(mean_reward) AS mean_reward, SUM(status = 'stale') AS stale
         FROM served_groups GROUP BY policy_version ORDER BY policy_version`,
      )
      .all() as ServingStats['byVersion'],
    staleness: db
      .prepare(
        `SELECT staleness AS behind, COUNT(*) AS groups FROM served_groups WHERE status = 'delivered' GROUP BY staleness ORDER BY staleness`,
      )
      .all() as ServingStats['staleness'],
    currentVersion: db.prepare('SELECT MAX(policy_version) FROM served_groups').pluck().get() as number | null,
  };
}
