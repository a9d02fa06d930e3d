import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { contentText, type Message, type ToolSpec } from '../model/messages.js';
import type { TrajectoryRecord } from '../trajectory/record.js';

/** The quality filters of `traj export`, in the order a record meets them; a record is counted under the first that drops it. */
export const QUALITY_FILTERS = [
  'unknown_tool',
  'malformed_arguments',
  'empty_answer',
  'duplicate_prompt',
  'duplicate_answer',
  'contaminated',
] as const;
export type QualityFilterName = (typeof QUALITY_FILTERS)[number];
export type QualityCounts = Record<QualityFilterName, number>;

export interface QualityOptions {
  /** Drop calls to tools the record did not offer, arguments invalid against the tool's schema, empty final answers. */
  quality?: boolean;
  /** Keep the first record of each prompt and of each normalised final answer. */
  dedupe?: boolean;
  /** A benchmark file (JSON lines or plain lines): drop records whose prompt shares a 13-gram with an item. */
  decontaminate?: string;
}

/** The n of the n-gram overlap, as the major SFT decontamination pipelines use. */
export const CONTAMINATION_NGRAM = 13;

export interface QualityFilter {
  /** The filter that drops `record`, or undefined to keep it (counted as it goes). */
  check(record: TrajectoryRecord): QualityFilterName | undefined;
  counts: QualityCounts;
  enabled: QualityFilterName[];
}

export function qualityFilter(options: QualityOptions): QualityFilter | undefined {
  const enabled = QUALITY_FILTERS.filter(
    (name) =>
      (options.quality && ['unknown_tool', 'malformed_arguments', 'empty_answer'].includes(name)) ||
      (options.dedupe && name.startsWith('duplicate_')) ||
      (options.decontaminate && name === 'contaminated'),
  );
  if (enabled.length === 0) return undefined;
  const benchmark = options.decontaminate ? benchmarkNgrams(options.decontaminate) : undefined;
  const counts = Object.fromEntries(QUALITY_FILTERS.map((name) => [name, 0])) as QualityCounts;
  const seen = { prompts: new Set<string>(), answers: new Set<string>() };
  const schemas = new Map<string, z.ZodType | null>();
  const drops = (name: QualityFilterName, record: TrajectoryRecord): boolean => {
    if (!enabled.includes(name)) return false;
    switch (name) {
      case 'unknown_tool':
        return toolCalls(record.messages).some((call) => !offered(record.tools).has(call.name));
      case 'malformed_arguments':
        return toolCalls(record.messages).some((call) => !argumentsValid(call, record.tools, schemas));
      case 'empty_answer':
        return finalAnswer(record.messages).trim() === '';
      case 'duplicate_prompt':
        return seen.prompts.has(normaliseSpaces(promptOf(record)));
      case 'duplicate_answer':
        return seen.answers.has(normaliseAnswer(finalAnswer(record.messages)));
      case 'contaminated':
        return ngrams(promptOf(record)).some((gram) => benchmark!.has(gram));
    }
  };
  return {
    counts,
    enabled,
    check(record) {
      const name = QUALITY_FILTERS.find((filter) => drops(filter, record));
      if (name) counts[name]++;
      // Only exported records count as seen: a duplicate of a dropped record is not a duplicate.
      else if (enabled.includes('duplicate_prompt')) remember(seen, record);
      return name;
    },
  };
}

/** An empty prompt or answer is never a duplicate. */
function remember(seen: { prompts: Set<string>; answers: Set<string> }, record: TrajectoryRecord): void {
  const prompt = normaliseSpaces(promptOf(record));
  const answer = normaliseAnswer(finalAnswer(record.messages));
  if (prompt) seen.prompts.add(prompt);
  if (answer) seen.answers.add(answer);
}

function toolCalls(messages: readonly Message[]): Array<{ name: string; arguments: string }> {
  return messages.flatMap((message) =>
    message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.function) : [],
  );
}

function offered(tools: readonly ToolSpec[]): Set<string> {
  return new Set(tools.map((tool) => tool.function.name));
}

/** JSON of an object that the offered tool's parameter schema accepts (zod reads the JSON Schema). */
function argumentsValid(
  call: { name: string; arguments: string },
  tools: readonly ToolSpec[],
  schemas: Map<string, z.ZodType | null>,
): boolean {
  const tool = tools.find((candidate) => candidate.function.name === call.name);
  if (!tool) return true; // counted as an unknown tool, not here
  let value: unknown;
  try {
    value = JSON.parse(call.arguments || '{}');
  } catch {
    return false;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const text = JSON.stringify(tool.function.parameters ?? {});
  if (!schemas.has(text)) schemas.set(text, compileSchema(tool.function.parameters));
  const schema = schemas.get(text);
  return schema ? schema.safeParse(value).success : true;
}

function compileSchema(parameters: unknown): z.ZodType | null {
  try {
    return z.fromJSONSchema((parameters ?? {}) as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read is not the record's fault: its calls are not judged by it.
    return null;
  }
}

/** The text of the last message when it is the assistant's answer; '' when the rollout ended otherwise. */
function finalAnswer(messages: readonly Message[]): string {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' && !last.tool_calls?.length ? (last.content ?? '') : '';
}

function promptOf(record: TrajectoryRecord): string {
  const first = record.messages.find((message) => message.role === 'user');
  return first ? contentText(first.content) : '';
}

function normaliseSpaces(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** Case, punctuation and spacing do not make an answer new. */
export function normaliseAnswer(text: string): string {
  return words(text).join(' ');
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function ngrams(text: string, n = CONTAMINATION_NGRAM): string[] {
  const tokens = words(text);
  const grams: string[] = [];
  for (let index = 0; index + n <= tokens.length; index++) grams.push(tokens.slice(index, index + n).join(' '));
  return grams;
}

/** Every 13-gram of every item: a JSON line's string values (nested ones too), or a plain line as it is. */
function benchmarkNgrams(path: string): Set<string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--decontaminate: cannot read the benchmark file ${path} (${(error as Error).message})`, {
      code: 'cli_usage',
    });
  }
  const grams = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    for (const item of itemTexts(line)) for (const gram of ngrams(item)) grams.add(gram);
  }
  return grams;
}

function itemTexts(line: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [line];
  }
  const texts: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === 'string') texts.push(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') Object.values(node).forEach(walk);
  };
  walk(value);
  return texts;
}
