import Database from 'better-sqlite3';
import { JudgeVerdictSchema, type JudgeCache, type JudgeVerdict } from '../eval/judge.js';

/** A verdict a rollout produced, written by the main thread with the rollout's result. */
export interface JudgeCacheEntry {
  key: string;
  verdict: JudgeVerdict;
}

/** Read-only connections to run stores, one per store and thread (WAL lets readers beside the writer). */
const readers = new Map<string, Database.Statement<[string], { verdict: string }> | null>();

function readerFor(path: string): Database.Statement<[string], { verdict: string }> | null {
  let statement = readers.get(path);
  if (statement === undefined) {
    try {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      statement = db.prepare<[string], { verdict: string }>('SELECT verdict FROM judge_cache WHERE key = ?');
    } catch {
      // No store (yet), or one without the table: every verdict is then simply a miss.
      statement = null;
    }
    readers.set(path, statement);
  }
  return statement;
}

/**
 * The judge cache a rollout uses inside a worker: lookups read the run store read-only; new
 * verdicts are collected in `fresh` and travel back in the outcome, because only the main thread
 * writes the store (they land in the same transaction as the result).
 */
export function rolloutJudgeCache(storePath: string | undefined): JudgeCache & { fresh: JudgeCacheEntry[] } {
  const fresh: JudgeCacheEntry[] = [];
  const local = new Map<string, JudgeVerdict>();
  return {
    fresh,
    get(key) {
      const known = local.get(key);
      if (known) return known;
      const row = storePath ? readerFor(storePath)?.get(key) : undefined;
      if (!row) return undefined;
      const parsed = JudgeVerdictSchema.safeParse(JSON.parse(row.verdict));
      return parsed.success ? parsed.data : undefined;
    },
    put(key, verdict) {
      local.set(key, verdict);
      fresh.push({ key, verdict });
    },
  };
}
