import { z } from 'zod';
import type { Sandbox } from '../sandbox/sandbox.js';

/** Limits on what tool results may put into the context window. */
export const BudgetSchema = z.strictObject({
  /** A single result longer than this is spilled to a file in the sandbox. */
  result_max_chars: z.number().int().positive().default(100_000),
  /** All results of one turn together; over it, the largest are spilled first. */
  turn_max_chars: z.number().int().positive().default(200_000),
  /** How much of a spilled result the model still sees inline. */
  preview_chars: z.number().int().positive().default(1_500),
  /** Per-toolset caps on single results (MCP results default to 50,000). */
  toolset_max_chars: z.record(z.string(), z.number().int().positive()).default({}),
  /** Where spilled results go, relative to the sandbox workdir. */
  spill_dir: z.string().default('.traj/tool-results'),
});
export type Budget = z.infer<typeof BudgetSchema>;

export const DEFAULT_BUDGET: Budget = BudgetSchema.parse({});
export const MCP_RESULT_MAX_CHARS = 50_000;

export interface BudgetedResult {
  id: string;
  name: string;
  toolset?: string;
  content: string;
}

function capFor(result: BudgetedResult, budget: Budget): number {
  const toolsetCap = result.toolset ? budget.toolset_max_chars[result.toolset] : undefined;
  const mcpCap = result.toolset?.startsWith('mcp:') ? MCP_RESULT_MAX_CHARS : undefined;
  return Math.min(budget.result_max_chars, toolsetCap ?? mcpCap ?? Number.POSITIVE_INFINITY);
}

async function spill(result: BudgetedResult, sandbox: Sandbox, budget: Budget): Promise<BudgetedResult> {
  // Names and ids come from the model: keep them from adding folders or spaces to the path.
  const safe = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
  const path = `${budget.spill_dir}/${safe(result.name)}-${safe(result.id)}.txt`;
  await sandbox.writeFile(path, result.content);
  const preview = result.content.slice(0, budget.preview_chars);
  const content =
    `${preview}\n\n[result truncated: ${result.content.length} chars in all; the full text is saved at ${path} — ` +
    `page through it with read_file (path "${path}", offset and limit)]`;
  return { ...result, content };
}

/**
 * Apply the per-result cap, then the per-turn cap (largest results spilled first), returning
 * the results in their original order. Spilled text lives in the sandbox so nothing is lost.
 */
export async function applyBudget(
  results: BudgetedResult[],
  sandbox: Sandbox,
  budget: Budget = DEFAULT_BUDGET,
): Promise<BudgetedResult[]> {
  const spilled = results.map((result) => result.content.length > capFor(result, budget));
  const out = await Promise.all(
    results.map((result, index) => (spilled[index] ? spill(result, sandbox, budget) : result)),
  );
  let total = out.reduce((sum, result) => sum + result.content.length, 0);
  const bySize = out.map((result, index) => ({ index, size: result.content.length })).sort((a, b) => b.size - a.size);
  for (const { index } of bySize) {
    if (total <= budget.turn_max_chars) break;
    if (spilled[index] || out[index]!.content.length <= budget.preview_chars) continue;
    const before = out[index]!.content.length;
    out[index] = await spill(out[index]!, sandbox, budget);
    spilled[index] = true;
    total += out[index]!.content.length - before;
  }
  return out;
}
