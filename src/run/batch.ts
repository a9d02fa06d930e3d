import type { Endpoint } from '../config/endpoint.js';
import { sha256, canonicalJson } from '../util/hash.js';
import { toolSpec, type ToolRegistry } from '../tools/registry.js';
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
  /** Called once per toolset dropped from a draw because it is unavailable here. */
  onDrop?: (toolset: string, reason: string) => void;
}

/**
 * The prompt dataset as pipeline entries: each row keyed (explicit id, else content hash plus
 * occurrence), its toolsets drawn from (seed, key) only, so a resume draws exactly the same.
 */
export async function* batchEntries(input: BatchEntriesInput): AsyncGenerator<PipelineEntry> {
  const keyer = new PromptKeyer({ source: input.dataset });
  const available = (toolset: string): true | string => input.registry.unavailableReason(toolset, { env: process.env }) ?? true;
  let rows = 0;
  for await (const row of readDataset(input.dataset, input.reader)) {
    if (input.limit !== undefined && rows >= input.limit) break;
    rows++;
    if ('bad' in row) {
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
      source: { dataset: input.dataset, row: row.index, fields: row.fields },
    };
  }
  input.store.setCounter('dataset_rows', rows);
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
}

/** The settings whose change makes a resumed run a different run (DESIGN.md "The run store"). */
export function fingerprintParts(input: FingerprintInput): Record<string, unknown> {
  const candidates = new Set(candidateToolsets(input.choice));
  const schemas = input.registry.all().filter((tool) => candidates.has(tool.toolset)).map(toolSpec);
  return {
    model: input.endpoint.model,
    base_url: input.endpointIdentity,
    tool_call_format: input.endpoint.tool_call_format,
    sampling: {
      temperature: input.endpoint.temperature ?? null,
      top_p: input.endpoint.top_p ?? null,
      max_tokens: input.endpoint.max_tokens ?? null,
      seed: input.endpoint.seed ?? null,
      extra_body: input.endpoint.extra_body ?? null,
    },
    toolsets: 'distribution' in input.choice ? { distribution: input.choice.distribution.name, probabilities: input.choice.distribution.toolsets } : { fixed: input.choice.toolsets },
    environment: input.environment,
    max_turns: input.maxTurns,
    system_prompt: input.systemPrompt ?? null,
    seed: input.seed,
    agent: input.agent,
    sandbox: input.sandbox,
    tool_schemas: sha256(canonicalJson(schemas)).slice(0, 16),
    ...(input.knowledge ? { knowledge: input.knowledge } : {}),
  };
}

export function recordFilters(options: { requireReasoning: boolean; completedOnly: boolean }): RecordFilter[] {
  const filters: RecordFilter[] = [];
  if (options.requireReasoning) filters.push((record) => (record.has_reasoning ? undefined : 'no reasoning (--require-reasoning)'));
  if (options.completedOnly) filters.push((record) => (record.completed ? undefined : `not completed: ${record.finish_reason} (--completed-only)`));
  return filters;
}
