import { JudgeVerdictSchema, type JudgeCache, type JudgeVerdict } from '../eval/judge.js';
import { openCacheReader } from './cache-reader.js';

/** A verdict a rollout produced, written by the main thread with the rollout's result. */
export interface JudgeCacheEntry {
  key: string;
  verdict: JudgeVerdict;
}

/** Read-only connections to run stores, one per store and thread. */
const readers = new Map<string, ((key: string) => string | undefined) | null>();

function readerFor(path: string): ((key: string) => string | undefined) | null {
  let reader = readers.get(path);
  if (reader === undefined) {
    // No store (yet), or one without the table: every verdict is then simply a miss.
    reader = openCacheReader(path, 'judge');
    readers.set(path, reader);
  }
  return reader;
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
      const verdict = storePath ? readerFor(storePath)?.(key) : undefined;
      if (!verdict) return undefined;
      const parsed = JudgeVerdictSchema.safeParse(JSON.parse(verdict));
      return parsed.success ? parsed.data : undefined;
    },
    put(key, verdict) {
      local.set(key, verdict);
      fresh.push({ key, verdict });
    },
  };
}
