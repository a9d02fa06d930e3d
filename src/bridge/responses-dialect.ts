import type { AssistantMessage, Message, ToolCall, ToolSpec } from '../model/messages.js';
import type { ModelResponse } from '../model/types.js';
import { functionTool } from './chat-dialect.js';
import {
  arrayOf,
  newId,
  objectOf,
  ProxyRequestError,
  sse,
  textOf,
  type AgentRequest,
  type WireDialect,
} from './exchange.js';

/**
 * The OpenAI Responses API (Codex) over a chat-completions endpoint: `instructions` and input items
 * become messages, function and custom tools become functions; the answer becomes output items.
 */
export const responsesDialect: WireDialect = {
  parse(body) {
    const request = objectOf(body, 'request body');
    const { tools, custom } = responsesTools(request.tools);
    const messages: Message[] = [];
    if (typeof request.instructions === 'string' && request.instructions)
      messages.push({ role: 'system', content: request.instructions });
    const input =
      typeof request.input === 'string' ? [{ type: 'message', role: 'user', content: request.input }] : request.input;
    arrayOf(input, 'input').forEach((item, index) => addItem(messages, objectOf(item, `input[${index}]`), index));
    return { messages, tools, stream: request.stream === true, customTools: custom };
  },
  reply(response, model, request) {
    return responseObject(response, model, outputItems(response, request.customTools ?? []), 'completed');
  },
  stream(response, model, request) {
    return responseEvents(response, model, request);
  },
  error(message, type) {
    return { error: { message, type, code: type } };
  },
};

function responsesTools(value: unknown): { tools: ToolSpec[]; custom: string[] } {
  const tools: ToolSpec[] = [];
  const custom: string[] = [];
  for (const tool of arrayOf(value, 'tools') as Array<Record<string, unknown>>) {
    const name = String(tool?.name ?? '');
    if (tool?.type === 'function') tools.push(functionTool(name, tool.description, tool.parameters));
    if (tool?.type === 'custom') {
      custom.push(name);
      const parameters = { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };
      tools.push(functionTool(name, tool.description, parameters));
    }
    // Hosted tools (web_search, file_search, …) have no chat-completions form: not offered.
  }
  return { tools, custom };
}

function addItem(messages: Message[], item: Record<string, unknown>, index: number): void {
  const type = item.type ?? 'message';
  if (type === 'message') return addMessage(messages, item, index);
  if (type === 'function_call' || type === 'custom_tool_call') {
    const args = type === 'function_call' ? String(item.arguments ?? '') : JSON.stringify({ input: item.input ?? '' });
    const call: ToolCall = {
      id: String(item.call_id ?? ''),
      type: 'function',
      function: { name: String(item.name), arguments: args },
    };
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
    else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    return;
  }
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    const output = typeof item.output === 'string' ? item.output : textOf(item.output);
    messages.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: output });
    return;
  }
  if (type === 'reasoning') return;
  throw new ProxyRequestError(`input[${index}].type: '${String(type)}' has no chat-completions form`);
}

function addMessage(messages: Message[], item: Record<string, unknown>, index: number): void {
  const text = textOf(item.content);
  switch (item.role) {
    case 'system':
    case 'developer':
      messages.push({ role: 'system', content: text });
      return;
    case 'user':
      messages.push({ role: 'user', content: text });
      return;
    case 'assistant':
      messages.push({ role: 'assistant', content: text });
      return;
    default:
      throw new ProxyRequestError(`input[${index}].role: expected system, developer, user or assistant`);
  }
}

function outputItems(response: ModelResponse, custom: readonly string[]): Array<Record<string, unknown>> {
  const { message } = response;
  const items: Array<Record<string, unknown>> = [];
  if (message.content) items.push(messageItem(message));
  for (const call of message.tool_calls ?? []) items.push(callItem(call, custom));
  return items;
}

function messageItem(message: AssistantMessage): Record<string, unknown> {
  return {
    type: 'message',
    id: newId('msg'),
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: message.content ?? '', annotations: [] }],
  };
}

function callItem(call: ToolCall, custom: readonly string[]): Record<string, unknown> {
  const base = { id: newId('fc'), call_id: call.id, name: call.function.name, status: 'completed' };
  if (!custom.includes(call.function.name))
    return { type: 'function_call', ...base, arguments: call.function.arguments };
  let input = call.function.arguments;
  try {
    const parsed = JSON.parse(input) as { input?: unknown };
    if (typeof parsed.input === 'string') input = parsed.input;
  } catch {
    // Not JSON: the model wrote the free text directly, which is what a custom tool takes.
  }
  return { type: 'custom_tool_call', ...base, input };
}

function responseObject(
  response: ModelResponse,
  model: string,
  output: Array<Record<string, unknown>>,
  status: string,
  id = newId('resp'),
): Record<string, unknown> {
  const { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } = response.usage;
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output,
    usage: {
      input_tokens: prompt_tokens,
      input_tokens_details: { cached_tokens },
      output_tokens: completion_tokens,
      output_tokens_details: { reasoning_tokens },
      total_tokens: prompt_tokens + completion_tokens,
    },
  };
}

function responseEvents(response: ModelResponse, model: string, request: AgentRequest): string[] {
  const id = newId('resp');
  const items = outputItems(response, request.customTools ?? []);
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    sse({ type, sequence_number: sequence++, ...fields }, type);
  const out = [event('response.created', { response: { ...responseObject(response, model, [], 'in_progress', id) } })];
  items.forEach((item, output_index) => {
    out.push(event('response.output_item.added', { output_index, item }));
    if (item.type === 'message') {
      const text = response.message.content ?? '';
      out.push(event('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: text }));
      out.push(event('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text }));
    }
    out.push(event('response.output_item.done', { output_index, item }));
  });
  out.push(event('response.completed', { response: responseObject(response, model, items, 'completed', id) }));
  return out;
}
