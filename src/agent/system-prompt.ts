import type { Tool } from '../tools/registry.js';

export const DEFAULT_SYSTEM_PROMPT =
  'You are a capable assistant that solves tasks by using the tools you are given. ' +
  'Think about what to do, call tools to inspect and change the environment, check your work, ' +
  'and finish with a short, direct answer.';

export interface SystemPromptInput {
  /** The run's own instructions (persona, task rules); DEFAULT_SYSTEM_PROMPT when absent. */
  base?: string;
  tools: readonly Tool[];
  /** Where the agent's commands start, so it does not have to discover it. */
  workdir?: string;
}

/**
 * Assemble the system prompt once per conversation. Deliberately free of clocks, random ids and
 * anything else that would differ between identical rollouts: the prompt prefix stays cacheable
 * and the record's saved system prompt is exactly the one the model saw.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const parts = [input.base?.trim() || DEFAULT_SYSTEM_PROMPT];
  if (input.tools.length > 0 && input.workdir) parts.push(`Your working directory is ${input.workdir}.`);
  return parts.join('\n\n');
}
