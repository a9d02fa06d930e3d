import {
  contentText,
  type AssistantMessage,
  type Message,
  type ToolMessage,
  type ToolSpec,
} from '../model/messages.js';
import { hermesSystemPrompt } from './hermes-template.js';
import { pythonJson } from './python-json.js';
import type { ShareGptTurn } from './record.js';

function parseJsonOrKeep(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `<think>` block (empty when the turn had none, as Hermes writes it), content, then one block per call. */
export function gptValue(message: AssistantMessage): string {
  const reasoning = message.reasoning?.trim();
  const think = reasoning ? `<think>\n${reasoning}\n</think>\n` : '<think>\n</think>\n';
  const calls = (message.tool_calls ?? []).map((call) => {
    const args = parseJsonOrKeep(call.function.arguments);
    return `<tool_call>\n${pythonJson({ name: call.function.name, arguments: args })}\n</tool_call>`;
  });
  const content = message.content?.trim() ? [message.content] : [];
  return think + [...content, ...calls].join('\n');
}

/** All results answering one assistant turn, as one `tool` turn; names come from the tool_call_id. */
export function toolValue(results: readonly ToolMessage[], callNames: ReadonlyMap<string, string>): string {
  return results
    .map((result) => {
      const content = parseJsonOrKeep(result.content);
      const embedded = content !== null && typeof content === 'object' ? content : result.content;
      const name = callNames.get(result.tool_call_id) ?? result.name ?? 'unknown';
      return `<tool_response>\n${pythonJson({ tool_call_id: result.tool_call_id, name, content: embedded })}\n</tool_response>`;
    })
    .join('\n');
}

/** The Hermes-compatible ShareGPT view of a conversation (see DESIGN.md "The ShareGPT view"). */
export function toShareGpt(messages: readonly Message[], tools: readonly ToolSpec[]): ShareGptTurn[] {
  const systemPrompt = messages.find((message) => message.role === 'system')?.content;
  const turns: ShareGptTurn[] = [{ from: 'system', value: hermesSystemPrompt(tools, systemPrompt) }];
  const callNames = new Map<string, string>();
  let pendingResults: ToolMessage[] = [];
  const flush = () => {
    if (pendingResults.length === 0) return;
    turns.push({ from: 'tool', value: toolValue(pendingResults, callNames) });
    pendingResults = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      pendingResults.push(message);
      continue;
    }
    flush();
    if (message.role === 'user') turns.push({ from: 'human', value: contentText(message.content) });
    else if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) callNames.set(call.id, call.function.name);
      turns.push({ from: 'gpt', value: gptValue(message) });
    }
  }
  flush();
  return turns;
}
