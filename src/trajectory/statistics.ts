import type { ToolCallRecord } from '../agent/result.js';
import type { Message } from '../model/messages.js';
import type { SubagentRecord } from '../tools/nested.js';
import type { CodeCall, Subagent, ToolStat } from './record.js';

/**
 * Per-tool counts, sorted by name: a list (not a map) so the Parquet schema is stable. The calls
 * an execute_code script made count too; a child agent's calls stay in its own transcript.
 */
export function toolStats(calls: readonly ToolCallRecord[]): ToolStat[] {
  const byName = new Map<string, ToolStat>();
  for (const call of calls.flatMap((outer) => [outer, ...(outer.inner ?? [])])) {
    const stat = byName.get(call.name) ?? { name: call.name, calls: 0, ok: 0, errors: 0 };
    stat.calls++;
    if (call.ok) stat.ok++;
    else stat.errors++;
    byName.set(call.name, stat);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The children of delegate_task calls and their children, each after its parent. */
export function flatSubagents(calls: readonly ToolCallRecord[]): Subagent[] {
  const flatten = (children: readonly SubagentRecord[], depth: number): Subagent[] =>
    children.flatMap((child) => [
      {
        call_id: child.call_id ?? '',
        depth,
        goal: child.goal,
        toolsets: child.toolsets,
        messages: child.messages,
        usage: child.usage,
        finish_reason: child.finish_reason,
      },
      ...flatten(child.subagents ?? [], depth + 1),
    ]);
  return flatten(
    calls.flatMap((call) => call.subagents ?? []),
    1,
  );
}

export function codeCalls(calls: readonly ToolCallRecord[]): CodeCall[] {
  return calls.flatMap((call) => (call.inner ?? []).map((inner) => ({ call_id: call.id ?? '', ...inner })));
}

const INLINE_REASONING =
  /<think>[\s\S]*?\S[\s\S]*?<\/think>|<REASONING_SCRATCHPAD>[\s\S]*?\S[\s\S]*?<\/REASONING_SCRATCHPAD>/;

/** True when any assistant turn carries reasoning: a reasoning field, or a non-empty think/scratchpad block. */
export function hasReasoning(messages: readonly Message[]): boolean {
  return messages.some(
    (message) =>
      message.role === 'assistant' &&
      (Boolean(message.reasoning?.trim()) || INLINE_REASONING.test(message.content ?? '')),
  );
}
