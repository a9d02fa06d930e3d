import type { Message, ToolCall, ToolSpec } from '../model/messages.js';
import type { ModelResponse } from '../model/types.js';
import { functionTool } from './chat-dialect.js';
import { arrayOf, newId, objectOf, ProxyRequestError, sse, textOf, type WireDialect } from './exchange.js';

type Block = Record<string, unknown>;

/** Anthropic Messages (Claude Code) over a chat-completions endpoint. */
export const anthropicDialect: WireDialect = {
  parse(body) {
    const request = objectOf(body, 'request body');
    const messages: Message[] = [];
    const system = textOf(request.system);
    if (system) messages.push({ role: 'system', content: system });
    arrayOf(request.messages, 'messages').forEach((message, index) =>
      addMessage(messages, objectOf(message, `messages[${index}]`), index),
    );
    const tools: ToolSpec[] = (arrayOf(request.tools, 'tools') as Block[])
      .filter((tool) => tool?.input_schema !== undefined)
      .map((tool) => functionTool(String(tool.name ?? ''), tool.description, tool.input_schema));
    return { messages, tools, stream: request.stream === true };
  },
  reply(response, model) {
    return { ...messageStart(response, model), content: contentBlocks(response), stop_reason: stopReason(response) };
  },
  stream(response, model) {
    const out = [
      sse({ type: 'message_start', message: { ...messageStart(response, model), content: [] } }, 'message_start'),
    ];
    contentBlocks(response).forEach((block, index) => {
      const empty = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
      out.push(sse({ type: 'content_block_start', index, content_block: empty }, 'content_block_start'));
      const delta =
        block.type === 'text'
          ? { type: 'text_delta', text: block.text }
          : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
      out.push(sse({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
      out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    });
    const usage = { output_tokens: response.usage.completion_tokens };
    out.push(
      sse(
        { type: 'message_delta', delta: { stop_reason: stopReason(response), stop_sequence: null }, usage },
        'message_delta',
      ),
    );
    out.push(sse({ type: 'message_stop' }, 'message_stop'));
    return out;
  },
  error(message, type) {
    return { type: 'error', error: { type: type === 'traj_limit' ? 'invalid_request_error' : type, message } };
  },
};

function addMessage(messages: Message[], message: Block, index: number): void {
  const blocks: Block[] =
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : (arrayOf(message.content, `messages[${index}].content`) as Block[]);
  if (message.role === 'assistant') {
    const text = blocks
      .filter((block) => block.type === 'text')
      .map((block) => String(block.text ?? ''))
      .join('');
    const calls: ToolCall[] = blocks
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      }));
    messages.push({ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    return;
  }
  // Claude Code 2.1 sends its environment notes as a system message between the turns.
  if (message.role === 'system') {
    messages.push({ role: 'system', content: textOf(blocks.filter((block) => block.type === 'text')) });
    return;
  }
  if (message.role !== 'user')
    throw new ProxyRequestError(`messages[${index}].role: expected user, assistant or system`);
  // Tool results come first in a user turn; they become tool messages, the rest one user message.
  for (const block of blocks.filter((part) => part.type === 'tool_result'))
    messages.push({ role: 'tool', tool_call_id: String(block.tool_use_id), content: textOf(block.content) });
  const text = textOf(blocks.filter((block) => block.type === 'text'));
  if (text) messages.push({ role: 'user', content: text });
}

function contentBlocks(response: ModelResponse): Block[] {
  const { message } = response;
  const blocks: Block[] = [];
  if (message.content) blocks.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) {
    let input: unknown = {};
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      input = { arguments: call.function.arguments };
    }
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  }
  return blocks;
}

function messageStart(response: ModelResponse, model: string): Block {
  return {
    id: newId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    stop_sequence: null,
    usage: { input_tokens: response.usage.prompt_tokens, output_tokens: response.usage.completion_tokens },
  };
}

function stopReason(response: ModelResponse): string {
  if (response.message.tool_calls?.length) return 'tool_use';
  return response.finishReason === 'length' ? 'max_tokens' : 'end_turn';
}
