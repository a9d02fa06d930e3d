import type { AgentResult } from '../agent/result.js';
import type { Message } from '../model/messages.js';

/** Prompt material the model sees at run time and the records never hold (Hermes semantics). */
export interface RunTimePrompt {
  /** Appended to the system prompt of every request. */
  ephemeralSystemPrompt?: string;
  /** Messages put between the system prompt and the prompt (few-shot priming). */
  prefill?: Message[];
}

/** What the model is sent: the saved conversation with the ephemeral prompt and the prefill added. */
export function withRunTimePrompt(saved: readonly Message[], runTime: RunTimePrompt): Message[] {
  const [system, ...rest] = saved;
  if (system?.role !== 'system') return [...(runTime.prefill ?? []), ...saved];
  const ephemeral = runTime.ephemeralSystemPrompt?.trim();
  const content = ephemeral ? `${system.content}\n\n${ephemeral}` : system.content;
  return [{ ...system, content }, ...(runTime.prefill ?? []), ...rest];
}

/** The result as recorded: the saved system message back in place, the prefill taken out. */
export function withoutRunTimePrompt(
  result: AgentResult,
  saved: readonly Message[],
  runTime: RunTimePrompt,
): AgentResult {
  if (!runTime.ephemeralSystemPrompt && !runTime.prefill?.length) return result;
  const hasSystem = saved[0]?.role === 'system';
  const head = hasSystem ? 1 : 0;
  const messages = [...saved.slice(0, head), ...result.messages.slice(head + (runTime.prefill?.length ?? 0))];
  return { ...result, messages };
}
