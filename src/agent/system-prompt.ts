import type { Tool } from '../tools/tool.js';

export const DEFAULT_SYSTEM_PROMPT =
  'You are a capable assistant that solves tasks by using the tools you are given. ' +
  'Think about what to do, call tools to inspect and change the environment, check your work, ' +
  'and finish with a short, direct answer.';

export interface SystemPromptInput {
  /** The run's own instructions (persona, task rules); DEFAULT_SYSTEM_PROMPT when absent. */
  base?: string;
  tools: readonly Tool[];
  /**
   * Sections read once at the start of a conversation (context files, the memory snapshot, the
   * skills index), appended in order; empty ones are skipped.
   */
  sections?: readonly string[];
}

/**
 * Assemble the system prompt once per conversation. Deliberately free of clocks, random ids and
 * sandbox paths (a local sandbox's folder differs per rollout): identical rollouts see identical
 * prompts, the prefix stays cacheable, and the record's saved prompt is exactly the one the model saw.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const base = input.base?.trim() || DEFAULT_SYSTEM_PROMPT;
  const toolsets = [...new Set(input.tools.map((tool) => tool.toolset))].join(', ');
  const head =
    input.tools.length === 0
      ? base
      : `${base}\n\nAvailable toolsets: ${toolsets}. Your commands start in your working directory.`;
  return [head, ...(input.sections ?? []).filter((section) => section.trim() !== '')].join('\n\n');
}
