import { contentText, type Message } from '../model/messages.js';

/**
 * traj's messages in the form Hugging Face chat templates read: `reasoning_content` for the
 * reasoning, tool-call arguments as objects (what vLLM and transformers hand templates; Qwen3's
 * writes them back with `tojson`), content never null (templates concatenate it).
 */
export function templateMessages(messages: readonly Message[]): Record<string, unknown>[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content ?? '',
          ...(message.reasoning !== undefined ? { reasoning_content: message.reasoning } : {}),
          ...(message.tool_calls?.length
            ? {
                tool_calls: message.tool_calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.function.name, arguments: argumentsValue(call.function.arguments) },
                })),
              }
            : {}),
        };
      case 'tool':
        return {
          role: 'tool',
          tool_call_id: message.tool_call_id,
          content: message.content,
          ...(message.name ? { name: message.name } : {}),
        };
      case 'user':
        return { role: 'user', content: contentText(message.content, '') };
      default:
        return { role: message.role, content: message.content };
    }
  });
}

/** A JSON object stays an object; anything else (malformed arguments) goes as the text the model wrote. */
function argumentsValue(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}
