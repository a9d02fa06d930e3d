import type Database from 'better-sqlite3';

// A rowid table on purpose: rows carry whole records (~10 KB), and WITHOUT ROWID tables keep rows
// inside the key's B-tree, where large rows spill to overflow pages and slow every lookup.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL, kind TEXT NOT NULL, config TEXT NOT NULL,
  fingerprint TEXT NOT NULL, fingerprint_parts TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fingerprint_changes (at TEXT NOT NULL, changes TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL, sample INTEGER NOT NULL, row_index INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending','done','discarded','failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  error_class TEXT, error_code TEXT, error_message TEXT,
  toolsets TEXT NOT NULL DEFAULT '[]', reward REAL, finish_reason TEXT, duration_ms INTEGER,
  completed INTEGER, has_reasoning INTEGER, reward_error INTEGER,
  prompt_tokens INTEGER, completion_tokens INTEGER, reasoning_tokens INTEGER, tool_stats TEXT,
  cached_tokens INTEGER, cost REAL, cost_source TEXT, unpriced_models TEXT, compressions INTEGER,
  record TEXT, updated_at TEXT NOT NULL,
  UNIQUE (key, sample)
);
-- Status first, then the dataset's order: the outputs read one status in order without sorting
-- its records (a temporary B-tree of every record took most of writing them out).
CREATE INDEX IF NOT EXISTS items_order ON items(status, row_index, key, sample);
DROP INDEX IF EXISTS items_status;
CREATE TABLE IF NOT EXISTS segments (
  id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, ended_at TEXT, wall_ms INTEGER,
  finished INTEGER NOT NULL DEFAULT 0, outcome TEXT
);
CREATE TABLE IF NOT EXISTS bad_rows (line INTEGER PRIMARY KEY, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS judge_cache (key TEXT PRIMARY KEY, verdict TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_lock (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, process_start TEXT, started_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS web_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS concurrency (segment INTEGER NOT NULL, at_ms INTEGER NOT NULL, level INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS toolset_drops (toolset TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (toolset, key)) WITHOUT ROWID;
`;

/**
 * Columns added after the first release: stores written before them get them on open, filled
 * from the stored records when `backfill` says how.
 */
const ADDED_COLUMNS: Record<string, { type: string; backfill?: string }> = {
  retryable: { type: 'INTEGER' },
  cached_tokens: { type: 'INTEGER', backfill: `json_extract(record, '$.usage.cached_tokens')` },
  cost: { type: 'REAL', backfill: `json_extract(record, '$.usage.cost')` },
  cost_source: { type: 'TEXT', backfill: `json_extract(record, '$.usage.cost_source')` },
  unpriced_models: {
    type: 'TEXT',
    backfill: `CASE WHEN instr(record, '"unpriced_models":["') > 0 THEN json_extract(record, '$.usage.unpriced_models') END`,
  },
  // `"replaced_start":` occurs once per compression and nowhere else unescaped.
  compressions: {
    type: 'INTEGER',
    backfill: `(length(record) - length(replace(record, '"replaced_start":', ''))) / length('"replaced_start":')`,
  },
};

/** Create the tables of a new store, and bring an older store's up to date (columns added since, backfilled). */
export function createStoreSchema(db: Database.Database): void {
  db.exec(SCHEMA);
  addMissingColumns(db);
}

function addMissingColumns(db: Database.Database): void {
  const present = new Set(
    (db.prepare('PRAGMA table_info(items)').all() as { name: string }[]).map((column) => column.name),
  );
  const added = Object.entries(ADDED_COLUMNS).filter(([name]) => !present.has(name));
  if (added.length === 0) return;
  db.transaction(() => {
    for (const [name, column] of added) db.exec(`ALTER TABLE items ADD COLUMN ${name} ${column.type}`);
    const fills = added.filter(([, column]) => column.backfill).map(([name, column]) => `${name} = ${column.backfill}`);
    if (fills.length > 0) db.exec(`UPDATE items SET ${fills.join(', ')} WHERE record IS NOT NULL`);
  })();
}
