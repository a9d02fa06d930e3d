import type { Message, ToolCall, ToolSpec } from '../model/messages.js';
import type { ModelResponse } from '../model/types.js';
import {
  arrayOf,
  finishOf,
  newId,
  objectOf,
  ProxyRequestError,
  sse,
  textOf,
  type AgentRequest,
  type WireDialect,
} from './exchange.js';

/** OpenAI chat completions, the format traj itself speaks: messages pass through nearly as sent. */
export const chatDialect: WireDialect = {
  parse(body) {
    const request = objectOf(body, 'request body');
    const messages = arrayOf(request.messages, 'messages').map((message, index) =>
      chatMessage(objectOf(message, `messages[${index}]`), index),
    );
    const streamOptions = request.stream_options as { include_usage?: boolean } | undefined;
    return {
      messages,
      tools: chatTools(request.tools),
      stream: request.stream === true,
      includeUsage: streamOptions?.include_usage === true,
    };
  },
  reply(response, model) {
    return {
      id: newId('chatcmpl'),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: wireAssistant(response), finish_reason: finishReason(response) }],
      usage: wireUsage(response),
    };
  },
  stream(response, model, request) {
    return chatChunks(response, model, request);
  },
  error(message, type) {
    return { error: { message, type, code: type } };
  },
};

function chatMessage(message: Record<string, unknown>, index: number): Message {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOf(message.content) };
    case 'user':
      return { role: 'user', content: typeof message.content === 'string' ? message.content : userParts(message) };
    case 'assistant':
      return assistantMessage(message);
    case 'tool':
      return { role: 'tool', tool_call_id: String(message.tool_call_id ?? ''), content: textOf(message.content) };
    default:
      throw new ProxyRequestError(`messages[${index}].role: expected system, developer, user, assistant or tool`);
  }
}

/** User parts: text and images kept, anything else (an agent's own part types) as its text. */
function userParts(message: Record<string, unknown>): Extract<Message, { role: 'user' }>['content'] {
  const parts = arrayOf(message.content, 'user content') as Array<Record<string, unknown>>;
  if (parts.every((part) => part?.type === 'text')) return textOf(parts);
  return parts.map((part) =>
    part?.type === 'image_url'
      ? { type: 'image_url' as const, image_url: part.image_url as { url: string } }
      : { type: 'text' as const, text: textOf([part]) },
  );
}

function assistantMessage(message: Record<string, unknown>): Message {
  const calls = arrayOf(message.tool_calls ?? undefined, 'tool_calls') as Array<Record<string, unknown>>;
  const toolCalls: ToolCall[] = calls.map((call) => {
    const fn = (call.function ?? {}) as { name?: string; arguments?: string };
    return {
      id: String(call.id ?? ''),
      type: 'function',
      function: { name: fn.name ?? '', arguments: fn.arguments ?? '' },
    };
  });
  const content = message.content === null || message.content === undefined ? null : textOf(message.content);
  return { role: 'assistant', content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
}

function chatTools(value: unknown): ToolSpec[] {
  return (arrayOf(value, 'tools') as Array<Record<string, unknown>>)
    .filter((tool) => tool?.type === 'function')
    .map((tool) => {
      const fn = objectOf(tool.function, 'tools[].function');
      return functionTool(String(fn.name ?? ''), fn.description, fn.parameters);
    });
}

export function functionTool(name: string, description: unknown, parameters: unknown): ToolSpec {
  return {
    type: 'function',
    function: {
      name,
      description: typeof description === 'string' ? description : '',
      parameters: (parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
    },
  };
}

function wireAssistant(response: ModelResponse): Record<string, unknown> {
  const { message } = response;
  return {
    role: 'assistant',
    content: message.content,
    ...(message.reasoning ? { reasoning_content: message.reasoning } : {}),
    ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
  };
}

function finishReason(response: ModelResponse): string {
  return finishOf(response.finishReason, (response.message.tool_calls?.length ?? 0) > 0);
}

function wireUsage(response: ModelResponse) {
  const { prompt_tokens, completion_tokens } = response.usage;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** The answer as chat chunks: the text, each call whole in one delta, the finish, the usage. */
function chatChunks(response: ModelResponse, model: string, request: AgentRequest): string[] {
  const id = newId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const { message } = response;
  const out = [chunk({ role: 'assistant', content: '' })];
  if (message.reasoning) out.push(chunk({ reasoning_content: message.reasoning }));
  if (message.content) out.push(chunk({ content: message.content }));
  (message.tool_calls ?? []).forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: call.function }] }));
  });
  out.push(chunk({}, finishReason(response)));
  if (request.includeUsage)
    out.push(sse({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: wireUsage(response) }));
  out.push(sse('[DONE]'));
  return out;
}
