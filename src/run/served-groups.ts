import type Database from 'better-sqlite3';

/**
 * Groups `traj serve` produced for a trainer, in the run store beside their rollouts: which item
 * and policy each ran with, whether it is still running, ready, delivered (to which request),
 * dropped as stale, or left without a scored rollout. The rollouts themselves are ordinary items
 * rows keyed by the group key, so a killed server resumes them as any run resumes.
 */
export const SERVED_GROUPS_SCHEMA = `
CREATE TABLE IF NOT EXISTS served_groups (
  seq INTEGER PRIMARY KEY,
  group_key TEXT NOT NULL UNIQUE,
  item_key TEXT NOT NULL,
  policy TEXT NOT NULL,
  policy_version INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running','ready','delivered','stale','empty')),
  request_id TEXT,
  payload TEXT,
  mean_reward REAL,
  staleness INTEGER,
  created_at TEXT NOT NULL, ready_at TEXT, delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS served_groups_status ON served_groups(status, seq);
CREATE INDEX IF NOT EXISTS served_groups_request ON served_groups(request_id);
`;

export type ServedGroupStatus = 'running' | 'ready' | 'delivered' | 'stale' | 'empty';

export interface ServedGroupRow {
  seq: number;
  group_key: string;
  item_key: string;
  /** JSON of the policy the group was asked from. */
  policy: string;
  policy_version: number;
  status: ServedGroupStatus;
  request_id: string | null;
  /** JSON of the scored group, once ready. */
  payload: string | null;
  mean_reward: number | null;
  /** Versions the group was behind when it was delivered or dropped. */
  staleness: number | null;
  created_at: string;
  ready_at: string | null;
  delivered_at: string | null;
}

export class ServedGroups {
  constructor(
    private readonly db: Database.Database,
    /** The store's deferred writes go first, so a group never lands before its rollouts. */
    private readonly flush: () => void,
  ) {}

  /** A new group: its sequence number (the order groups are delivered in). */
  start(input: { itemKey: string; groupKey: (seq: number) => string; policy: unknown; version: number }): {
    seq: number;
    groupKey: string;
  } {
    return this.db.transaction(() => {
      const seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 FROM served_groups').pluck().get() as number) ?? 1;
      const groupKey = input.groupKey(seq);
      this.db
        .prepare(
          `INSERT INTO served_groups (seq, group_key, item_key, policy, policy_version, status, created_at) VALUES (?, ?, ?, ?, ?, 'running', ?)`,
        )
        .run(seq, groupKey, input.itemKey, JSON.stringify(input.policy), input.version, new Date().toISOString());
      return { seq, groupKey };
    })();
  }

  /** The policy of the newest version any group was started with: where a restarted server resumes. */
  latestPolicy(): { policy: string; version: number } | undefined {
    return this.db
      .prepare(
        'SELECT policy, policy_version AS version FROM served_groups ORDER BY policy_version DESC, seq DESC LIMIT 1',
      )
      .get() as { policy: string; version: number } | undefined;
  }

  withStatus(status: ServedGroupStatus): ServedGroupRow[] {
    this.flush();
    return this.db.prepare('SELECT * FROM served_groups WHERE status = ? ORDER BY seq').all(status) as ServedGroupRow[];
  }

  byKey(groupKey: string): ServedGroupRow | undefined {
    return this.db.prepare('SELECT * FROM served_groups WHERE group_key = ?').get(groupKey) as
      | ServedGroupRow
      | undefined;
  }

  /** A running group's rollouts all landed: ready with its payload, or empty when none was scored. */
  finish(seq: number, payload: unknown | null, meanReward: number | null, work: () => void = () => {}): void {
    this.flush();
    this.db.transaction(() => {
      work();
      this.db
        .prepare(
          `UPDATE served_groups SET status = ?, payload = ?, mean_reward = ?, ready_at = ? WHERE seq = ? AND status = 'running'`,
        )
        .run(
          payload === null ? 'empty' : 'ready',
          payload === null ? null : JSON.stringify(payload),
          meanReward,
          new Date().toISOString(),
          seq,
        );
    })();
  }

  /**
   * Hand up to `count` ready groups to a request, oldest first, in one transaction; groups more than
   * `maxStaleness` versions behind `version` are dropped on the way and counted. A request id seen
   * before gets the groups it was given then, and nothing new: a retried request never duplicates.
   */
  deliver(
    requestId: string,
    count: number,
    version: number,
    maxStaleness: number,
  ): { rows: ServedGroupRow[]; dropped: number } {
    this.flush();
    return this.db.transaction(() => {
      const given = this.deliveredTo(requestId);
      if (given.length > 0) return { rows: given, dropped: 0 };
      const dropped = this.dropStale(version, maxStaleness);
      const rows = this.db
        .prepare(`SELECT * FROM served_groups WHERE status = 'ready' ORDER BY seq LIMIT ?`)
        .all(count) as ServedGroupRow[];
      const now = new Date().toISOString();
      const update = this.db.prepare(
        `UPDATE served_groups SET status = 'delivered', request_id = ?, delivered_at = ?, staleness = ? WHERE seq = ?`,
      );
      for (const row of rows) update.run(requestId, now, version - row.policy_version, row.seq);
      return { rows: this.deliveredTo(requestId), dropped };
    })();
  }

  /** A group pushed downstream (Atropos) and accepted there. */
  markDelivered(seq: number, requestId: string, version: number): void {
    this.db
      .prepare(
        `UPDATE served_groups SET status = 'delivered', request_id = ?, delivered_at = ?, staleness = ? - policy_version WHERE seq = ? AND status = 'ready'`,
      )
      .run(requestId, new Date().toISOString(), version, seq);
  }

  /** Ready groups more than `maxStaleness` versions behind `version`, marked stale; how many. */
  dropStale(version: number, maxStaleness: number): number {
    return this.db
      .prepare(
        `UPDATE served_groups SET status = 'stale', staleness = ? - policy_version WHERE status = 'ready' AND policy_version < ?`,
      )
      .run(version, version - maxStaleness).changes;
  }

  deliveredTo(requestId: string): ServedGroupRow[] {
    return this.db
      .prepare(`SELECT * FROM served_groups WHERE request_id = ? ORDER BY seq`)
      .all(requestId) as ServedGroupRow[];
  }

  counts(): Record<ServedGroupStatus, number> {
    this.flush();
    const counts: Record<ServedGroupStatus, number> = { running: 0, ready: 0, delivered: 0, stale: 0, empty: 0 };
    const rows = this.db.prepare('SELECT status, COUNT(*) AS n FROM served_groups GROUP BY status').all() as {
      status: ServedGroupStatus;
      n: number;
    }[];
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  /** Every group without its payload, in order: what `traj view` plots. */
  timeline(): Omit<ServedGroupRow, 'payload'>[] {
    this.flush();
    return this.db
      .prepare(
        'SELECT seq, group_key, item_key, policy, policy_version, status, request_id, mean_reward, staleness, created_at, ready_at, delivered_at FROM served_groups ORDER BY seq',
      )
      .all() as Omit<ServedGroupRow, 'payload'>[];
  }
}
