import { contentText, type Message, type Usage } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import type { ToolServices } from '../tools/services.js';

export interface SummaryRequest {
  /** The transcript range being replaced (tool calls and results included). */
  messages: Message[];
  /** The summary of an earlier compression this one extends, if any. */
  previousSummary?: string;
  signal?: AbortSignal;
}

export interface Summary {
  text: string;
  /** Tokens the summariser call used, counted into the rollout's usage. */
  usage?: Usage;
}

/** Writes the summary of a conversation range; injectable so an auxiliary model can do it. */
export type Summarizer = (request: SummaryRequest) => Promise<Summary>;

export const SUMMARIZER_PROMPT =
  'You compress the middle of an agent conversation so the agent can continue its task. Write a concise summary that ' +
  'keeps: the goal and constraints, decisions made, facts learned (file paths, commands, values, errors), what was ' +
  'tried and its outcome, and what remains to do. Leave out pleasantries. Write plain text, no preamble.';

/**
 * The summariser compression uses: the auxiliary `summarizer` model when the run configures one
 * (`auxiliary.summarizer`, the same model web_extract summarises pages with), else the main model.
 */
export function summarizerFor(main: ModelClient, services: ToolServices | undefined): Summarizer {
  const auxiliary = services?.auxiliary.summarizer;
  return modelSummarizer(auxiliary && services ? services.model(auxiliary) : main);
}

/** A summariser that asks a model (the main endpoint's, unless the caller wires an auxiliary one). */
export function modelSummarizer(model: ModelClient): Summarizer {
  return async ({ messages, previousSummary, signal }) => {
    const earlier = previousSummary ? `Summary of the part before:\n${previousSummary}\n\n` : '';
    const response = await model.complete({
      messages: [
        { role: 'system', content: SUMMARIZER_PROMPT },
        { role: 'user', content: `${earlier}Conversation to summarise:\n\n${renderForSummary(messages)}` },
      ],
      signal,
    });
    return { text: response.message.content?.trim() || '(the summariser returned nothing)', usage: response.usage };
  };
}

/** The range as plain text, long tool outputs cut in the middle so the summariser's own request stays small. */
export function renderForSummary(messages: readonly Message[], maxChars = 2000): string {
  return messages
    .map((message) => {
      const calls =
        message.role === 'assistant' && message.tool_calls?.length
          ? `\n[calls] ${message.tool_calls.map((call) => `${call.function.name}(${call.function.arguments})`).join('; ')}`
          : '';
      const who = message.role === 'tool' ? `tool ${message.name ?? ''}`.trim() : message.role;
      return `[${who}] ${shorten(contentText(message.content ?? ''), maxChars)}${calls}`;
    })
    .join('\n\n');
}

function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n…[${text.length - max} characters cut]…\n${text.slice(-half)}`;
}
