import type { Endpoint } from '../config/endpoint.js';
import type { AuxiliaryModels } from '../config/auxiliary.js';
import type { ToolSettings } from '../config/tool-settings.js';
import type { Usage } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';

export type { AuxiliaryModels };

/** What a web tool fetched, keyed by query or URL; see run/web-cache.ts for the store-backed one. */
export interface WebCache {
  get(key: string): unknown | undefined;
  put(key: string, value: unknown): void;
  /** Network fetches and searches made, and answers served from the cache. */
  readonly counts: { fetches: number; hits: number };
}

/** Files a tool keeps beyond the rollout (browser screenshots); the record lists their paths. */
export interface ArtifactSink {
  /** Store `data` under a name like `screenshot.png`; returns the absolute path it was written to. */
  save(name: string, data: Buffer): Promise<string>;
}

/**
 * What tools that reach outside services get from the surface running them (batch, eval, ask,
 * chat): settings, auxiliary models and one model client per endpoint, shared by the thread so
 * retries and concurrency limits hold across every caller.
 */
export interface ToolServices {
  /** Every tool section of the configuration, whole (TRAJ_HOME/config.yaml, run config, flags merged). */
  settings: ToolSettings;
  /** The auxiliary models of `settings.auxiliary`, resolved against the main endpoint. */
  auxiliary: AuxiliaryModels;
  model(endpoint: Endpoint): ModelClient;
  webCache?: WebCache;
  /** Where the rollout's artifacts go (batch, eval: beside the run store); absent in chat and ask. */
  artifacts?: ArtifactSink;
  /** Add an inner model call's tokens (MoA, vision, summaries) to the rollout's usage. */
  reportUsage?(usage: Usage): void;
}

/** A cache that only counts: for surfaces without a run store (chat, ask). */
export function countingWebCache(): WebCache {
  const entries = new Map<string, unknown>();
  const counts = { fetches: 0, hits: 0 };
  return {
    counts,
    get: (key) => entries.get(key),
    put: (key, value) => void entries.set(key, value),
  };
}
