import type { ToolCallRecord } from '../agent/result.js';
import type { Message } from '../model/messages.js';
import type { ToolStat } from './record.js';

/** Per-tool counts, sorted by name: a list (not a map) so the Parquet schema is stable. */
export function toolStats(calls: readonly ToolCallRecord[]): ToolStat[] {
  const byName = new Map<string, ToolStat>();
  for (const call of calls) {
    const stat = byName.get(call.name) ?? { name: call.name, calls: 0, ok: 0, errors: 0 };
    stat.calls++;
    if (call.ok) stat.ok++;
    else stat.errors++;
    byName.set(call.name, stat);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

const INLINE_REASONING = /<think>[\s\S]*?\S[\s\S]*?<\/think>|<REASONING_SCRATCHPAD>[\s\S]*?\S[\s\S]*?<\/REASONING_SCRATCHPAD>/;

/** True when any assistant turn carries reasoning: a reasoning field, or a non-empty think/scratchpad block. */
export function hasReasoning(messages: readonly Message[]): boolean {
  return messages.some(
    (message) => message.role === 'assistant' && (Boolean(message.reasoning?.trim()) || INLINE_REASONING.test(message.content ?? '')),
  );
}
