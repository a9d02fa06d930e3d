import { RunError } from '../errors.js';
import type { Message, ToolSpec, Usage } from '../model/messages.js';
import {
  compressibleRange,
  messageTurns,
  regionEnd,
  spliceSummary,
  summaryContent,
  summaryPrompt,
  withSummaryPrefix,
  type CompressSettings,
  type MessageTurn,
} from '../trajectory/compress-plan.js';
import type { ShareGptTurn, TrajectoryRecord } from '../trajectory/record.js';
import { toShareGpt } from '../trajectory/sharegpt.js';
import type { ShapingMetrics } from './store.js';

/** Asks the summariser model for the text replacing some turns (Hermes' prompt as the one user message). */
export type SummaryCall = (prompt: string) => Promise<{ text: string; usage?: Usage }>;

export interface ShapeOptions extends CompressSettings {
  /** Token count of a text with the policy's tokenizer (special tokens in it recognised, none added). */
  countTokens: (text: string) => number;
  summarize: SummaryCall;
}

export interface ShapedRecord {
  /** The compressed record, or null when the record was left as it is (it fits, or nothing could be replaced). */
  record: TrajectoryRecord | null;
  metrics: ShapingMetrics;
}

/** Rounds of summarising: a summary longer than expected widens the region and asks again, up to this many times. */
const MAX_ROUNDS = 3;

interface Shape {
  messages: Message[];
  conversations: ShareGptTurn[];
  turns: MessageTurn[];
  counts: number[];
  total: number;
}

/**
 * One record fitted to the budget as Hermes' trajectory_compressor.py fits it (see
 * trajectory/compress-plan.ts), counting what Hermes counts: the tokens of every ShareGPT turn's
 * value. It stops as soon as the record fits; a record that cannot fit is returned marked
 * `over_limit`, never cut.
 */
export async function shapeRecord(record: TrajectoryRecord, options: ShapeOptions): Promise<ShapedRecord> {
  const memo = new Map<string, number>();
  const count = (text: string) => {
    let tokens = memo.get(text);
    if (tokens === undefined) memo.set(text, (tokens = options.countTokens(text)));
    return tokens;
  };
  const original = shapeOf(record.messages, record.tools, count);
  if (original.turns.length !== original.conversations.length)
    throw new RunError(`record ${record.id}#${record.sample}: its turns do not line up with its ShareGPT view`, {
      code: 'invalid_record',
    });
  const metrics: ShapingMetrics = {
    tokens_before: original.total,
    tokens_after: original.total,
    turns_before: original.conversations.length,
    turns_after: original.conversations.length,
    turns_summarised: 0,
    summary_calls: 0,
    compressed: false,
    over_limit: original.total > options.maxTokens,
  };
  if (!metrics.over_limit) return { record: null, metrics };
  const range = compressibleRange(original.turns, options.protectLastTurns);
  let toSave = original.total - options.maxTokens + options.summaryTargetTokens;
  let best: Shape | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const end = regionEnd(original.counts, range, toSave, original.turns);
    if (end <= range.start) break;
    const prompt = summaryPrompt(summaryContent(original.conversations, range.start, end), options.summaryTargetTokens);
    metrics.summary_calls++;
    const summary = withSummaryPrefix((await options.summarize(prompt)).text);
    const messages = spliceSummary(original.messages, original.turns, range.start, end, summary);
    best = shapeOf(messages, record.tools, count);
    metrics.turns_summarised = end - range.start;
    if (best.total <= options.maxTokens || end >= range.end) break;
    toSave += best.total - options.maxTokens;
  }
  if (!best) return { record: null, metrics };
  Object.assign(metrics, {
    tokens_after: best.total,
    turns_after: best.conversations.length,
    compressed: true,
    over_limit: best.total > options.maxTokens,
  });
  return { record: { ...record, messages: best.messages, conversations: best.conversations }, metrics };
}

function shapeOf(messages: readonly Message[], tools: readonly ToolSpec[], count: (text: string) => number): Shape {
  const conversations = toShareGpt(messages, tools);
  const counts = conversations.map((turn) => count(turn.value));
  return {
    messages: [...messages],
    conversations,
    turns: messageTurns(messages),
    counts,
    total: counts.reduce((sum, tokens) => sum + tokens, 0),
  };
}
