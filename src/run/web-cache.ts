import type { WebCache } from '../tools/services.js';
import { openCacheReader } from './cache-reader.js';

/** A page or search result a rollout fetched, written by the main thread with the rollout's result. */
export interface WebCacheEntry {
  key: string;
  value: unknown;
}

export type WebCacheMode = 'readwrite' | 'read' | 'off';

/** Read-only connections to run stores, one per store and thread. */
const readers = new Map<string, ((key: string) => string | undefined) | null>();

function readerFor(path: string): ((key: string) => string | undefined) | null {
  let reader = readers.get(path);
  if (reader === undefined) {
    // No store, or one without the table: every lookup is then a miss.
    reader = openCacheReader(path, 'web');
    readers.set(path, reader);
  }
  return reader;
}

/**
 * What this thread's rollouts fetched lately, per store: a rollout finds a page another rollout
 * of the same thread fetched before it landed in the store. Bounded (oldest out first).
 */
const THREAD_ENTRIES_MAX = 500;
const threadEntries = new Map<string, Map<string, unknown>>();

function threadCacheFor(path: string): Map<string, unknown> {
  let entries = threadEntries.get(path);
  if (!entries) {
    entries = new Map();
    threadEntries.set(path, entries);
  }
  return entries;
}

function remember(entries: Map<string, unknown>, key: string, value: unknown): void {
  entries.set(key, value);
  if (entries.size > THREAD_ENTRIES_MAX) entries.delete(entries.keys().next().value!);
}

/**
 * The web cache a rollout's tools use inside a worker, as the judge cache does: lookups read the
 * run store read-only; new entries are collected in `fresh` and travel back in the outcome, because
 * only the main thread writes the store. `read` serves what is stored and adds nothing; `off`
 * neither reads nor writes (the counts still say how many fetches were made).
 */
export function rolloutWebCache(
  settings: { path?: string; mode: WebCacheMode } | undefined,
): WebCache & { fresh: WebCacheEntry[] } {
  const fresh: WebCacheEntry[] = [];
  const local = new Map<string, unknown>();
  const mode = settings?.mode ?? 'off';
  const path = settings?.path;
  const thread = path && mode === 'readwrite' ? threadCacheFor(path) : undefined;
  return {
    fresh,
    counts: { fetches: 0, hits: 0 },
    get(key) {
      if (mode === 'off') return undefined;
      if (local.has(key)) return local.get(key);
      if (thread?.has(key)) return thread.get(key);
      const value = path ? readerFor(path)?.(key) : undefined;
      return value ? JSON.parse(value) : undefined;
    },
    put(key, value) {
      if (mode !== 'readwrite') return;
      local.set(key, value);
      if (thread) remember(thread, key, value);
      fresh.push({ key, value });
    },
  };
}
