import type { Endpoint } from '../config/endpoint.js';
import { DatasetError } from '../errors.js';
import { sha256, canonicalJson } from '../util/hash.js';
import type { AuxiliaryModels } from '../config/auxiliary.js';
import type { BrowserConfig } from '../config/browser.js';
import { DEFAULT_WEB_CONFIG, type WebConfig } from '../config/web.js';
import { toolSpec } from '../tools/tool-spec.js';
import type { AvailabilityContext } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { sampleToolsets, type Distribution } from '../tools/distributions.js';
import { readDataset, type ReadDatasetOptions } from '../dataset/index.js';
import type { PipelineEntry, RecordFilter } from './pipeline.js';
import { PromptKeyer } from './prompt-key.js';
import type { RunStore } from './store.js';

/** Where each prompt's toolsets come from: a distribution drawn per prompt, or a fixed list. */
export type ToolsetChoice = { distribution: Pick<Distribution, 'name' | 'toolsets'> } | { toolsets: string[] };

export interface BatchEntriesInput {
  dataset: string;
  reader: ReadDatasetOptions;
  choice: ToolsetChoice;
  seed: number;
  limit?: number;
  registry: ToolRegistry;
  store: RunStore;
  /**
   * Rows the dataset holds when known up front (a JSONL line count): statistics count them even if the
   * run stops early.
   */
  expectedRows?: number;
  /** Called once per toolset dropped from a draw because it is unavailable here. */
  onDrop?: (toolset: string, reason: string) => void;
  /** What tools' availability checks see (default: the environment only). */
  availability?: AvailabilityContext;
}

/**
 * The prompt dataset as pipeline entries: each row keyed (explicit id, else content hash plus
 * occurrence), its toolsets drawn from (seed, key) only, so a resume draws exactly the same.
 */
export async function* batchEntries(input: BatchEntriesInput): AsyncGenerator<PipelineEntry> {
  const keyer = new PromptKeyer({ source: input.dataset });
  const context = input.availability ?? { env: process.env };
  const available = (toolset: string): true | string => input.registry.unavailableReason(toolset, context) ?? true;
  if (input.expectedRows !== undefined)
    input.store.setCounter('dataset_rows', Math.min(input.expectedRows, input.limit ?? input.expectedRows));
  let rows = 0;
  let bad = 0;
  for await (const row of readDataset(input.dataset, input.reader)) {
    if (input.limit !== undefined && rows >= input.limit) break;
    rows++;
    if ('bad' in row) {
      bad++;
      yield { bad: true, line: row.line, reason: row.reason };
      continue;
    }
    const key = keyer.key(row);
    let toolsets: string[];
    if ('distribution' in input.choice) {
      const draw = sampleToolsets(input.choice.distribution, { seed: input.seed, key, available });
      for (const dropped of draw.dropped) {
        input.store.addCounter(`dropped:${dropped.toolset}`, 1);
        input.onDrop?.(dropped.toolset, dropped.reason);
      }
      toolsets = draw.toolsets;
    } else toolsets = input.choice.toolsets;
    yield {
      key,
      sample: 0,
      rowIndex: row.index,
      group: null,
      task: { toolsets, messages: row.messages, system: row.system, image: row.image, workdir: row.cwd },
      // The same number a bad row is reported with (file:line), so a user finds either the same way.
      source: { dataset: input.dataset, row: row.line, fields: row.fields },
    };
  }
  input.store.setCounter('dataset_rows', rows);
  if (rows === 0)
    throw new DatasetError(`${input.dataset}: the dataset has no rows (nothing to run)`, {
      code: 'dataset_empty',
      details: { source: input.dataset },
    });
  if (bad === rows) {
    throw new DatasetError(
      `${input.dataset}: all ${rows} rows are malformed (skipped with --skip-bad-rows; see statistics.json "bad_rows")`,
      {
        code: 'dataset_all_bad',
        details: { source: input.dataset, rows },
      },
    );
  }
}

/** The toolsets a run may offer: every toolset of the distribution, or the fixed list. */
export function candidateToolsets(choice: ToolsetChoice): string[] {
  return 'distribution' in choice ? Object.keys(choice.distribution.toolsets) : choice.toolsets;
}

export interface FingerprintInput {
  endpoint: Endpoint;
  /** The endpoint's stable identity (its base URL, or a name for the built-in scripted one). */
  endpointIdentity: string;
  choice: ToolsetChoice;
  registry: ToolRegistry;
  maxTurns: number;
  systemPrompt: string | undefined;
  seed: number;
  environment: { name: string; version: string };
  agent: string;
  sandbox: { kind: string; image?: string };
  /** Memory, skills and compression settings (see knowledgeFingerprint); absent when none is set. */
  knowledge?: Record<string, unknown>;
  /** Run-time prompt material: part of the fingerprint when set, though records do not hold it. */
  runTime?: { ephemeralSystemPrompt?: string; prefill?: unknown[] };
  /** Web settings and auxiliary models: part of the fingerprint when a candidate toolset uses them. */
  tools?: { web?: WebConfig; auxiliary?: AuxiliaryModels };
}

/** The settings whose change makes a resumed run a different run (DESIGN.md "The run store"). */
export function fingerprintParts(input: FingerprintInput): Record<string, unknown> {
  const candidates = new Set(candidateToolsets(input.choice));
  const schemas = input.registry.toolsOf([...candidates]).map(toolSpec);
  return {
    model: input.endpoint.model,
    base_url: input.endpointIdentity,
    tool_call_format: input.endpoint.tool_call_format,
    // What is echoed back changes every later request; the default stays out so older stores resume.
    ...(input.endpoint.reasoning_echo && input.endpoint.reasoning_echo !== 'auto'
      ? { reasoning_echo: input.endpoint.reasoning_echo }
      : {}),
    sampling: {
      temperature: input.endpoint.temperature ?? null,
      top_p: input.endpoint.top_p ?? null,
      max_tokens: input.endpoint.max_tokens ?? null,
      seed: input.endpoint.seed ?? null,
      extra_body: input.endpoint.extra_body ?? null,
    },
    toolsets:
      'distribution' in input.choice
        ? { distribution: input.choice.distribution.name, probabilities: input.choice.distribution.toolsets }
        : { fixed: input.choice.toolsets },
    environment: input.environment,
    max_turns: input.maxTurns,
    system_prompt: input.systemPrompt ?? null,
    // Only when set, so stores written before these options resume with the fingerprint they have.
    ...(input.runTime?.ephemeralSystemPrompt ? { ephemeral_system_prompt: input.runTime.ephemeralSystemPrompt } : {}),
    ...(input.runTime?.prefill?.length ? { prefill: sha256(canonicalJson(input.runTime.prefill)).slice(0, 16) } : {}),
    seed: input.seed,
    agent: input.agent,
    sandbox: input.sandbox,
    tool_schemas: sha256(canonicalJson(schemas)).slice(0, 16),
    ...toolServiceParts(
      candidates,
      input.tools,
      { baseUrl: input.endpoint.base_url, identity: input.endpointIdentity },
      compressionEnabled(input.knowledge),
    ),
    ...(input.knowledge ? { knowledge: input.knowledge } : {}),
  };
}

/**
 * The auxiliary models (and web settings) the candidate toolsets and compression use. Runs without
 * them keep the fingerprint they always had.
 */
function toolServiceParts(
  candidates: Set<string>,
  tools: FingerprintInput['tools'],
  main: { baseUrl: string; identity: string },
  compressing: boolean,
): Record<string, unknown> {
  const parts: Record<string, unknown> = {};
  // An auxiliary model on the main endpoint (vision defaults to it) takes the endpoint's stable
  // identity: the built-in scripted endpoint has a new port on every run.
  const baseUrl = (url: string) => (url === main.baseUrl ? main.identity : url);
  const model = (endpoint: Endpoint | undefined) =>
    endpoint && {
      model: endpoint.model,
      base_url: baseUrl(endpoint.base_url),
      temperature: endpoint.temperature ?? null,
      max_tokens: endpoint.max_tokens ?? null,
      extra_body: endpoint.extra_body ?? null,
    };
  const auxiliary = tools?.auxiliary;
  const used: Record<string, unknown> = {};
  if (candidates.has('vision')) used.vision = model(auxiliary?.vision) ?? null;
  // web_extract summarises long pages with it; compression summarises the conversation with it.
  if (candidates.has('web') || (compressing && auxiliary?.summarizer))
    used.summarizer = model(auxiliary?.summarizer) ?? null;
  if (candidates.has('image_gen')) used.image = model(auxiliary?.image) ?? null;
  if (candidates.has('moa'))
    used.moa = auxiliary?.moa
      ? { reference: auxiliary.moa.reference.map(model), aggregator: model(auxiliary.moa.aggregator) }
      : null;
  if (Object.keys(used).length > 0) parts.auxiliary = used;
  if (candidates.has('web') || candidates.has('browser')) parts.web = tools?.web ?? DEFAULT_WEB_CONFIG;
  return parts;
}

/** Compression is on unless the run config turns it off (knowledgeFingerprint keeps its settings). */
function compressionEnabled(knowledge: Record<string, unknown> | undefined): boolean {
  const compression = knowledge?.compression as { enabled?: boolean } | null | undefined;
  return compression?.enabled !== false;
}

/** What availability checks on the main thread see: the run's tool settings, no model clients. */
export function availabilityContext(
  settings: { endpoint: Endpoint; web?: WebConfig; auxiliary?: AuxiliaryModels; browser?: BrowserConfig },
  env: NodeJS.ProcessEnv = process.env,
): AvailabilityContext {
  return {
    env,
    services: {
      web: settings.web ?? DEFAULT_WEB_CONFIG,
      auxiliary: settings.auxiliary ?? { vision: settings.endpoint },
      browser: settings.browser,
      model: () => {
        throw new Error('availability checks call no model');
      },
    },
  };
}

export function recordFilters(options: { requireReasoning: boolean; completedOnly: boolean }): RecordFilter[] {
  const filters: RecordFilter[] = [];
  if (options.requireReasoning)
    filters.push((record) => (record.has_reasoning ? undefined : 'no reasoning (--require-reasoning)'));
  if (options.completedOnly)
    filters.push((record) =>
      record.completed ? undefined : `not completed: ${record.finish_reason} (--completed-only)`,
    );
  return filters;
}
