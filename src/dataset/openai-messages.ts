import { z } from 'zod';
import { ContentPartSchema, TextPartSchema, type ContentPart, type Message, type ToolCall } from '../model/messages.js';

/** Plain text, or OpenAI content parts (text only, except in user messages). */
const ContentSchema = z.union([z.string(), z.array(TextPartSchema)]);
/** A user message may carry images: they reach the model unchanged. */
const UserContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

const ToolCallInputSchema = z.object({
  id: z.string().min(1, 'must not be empty'),
  type: z.literal('function').optional(),
  function: z.object({
    name: z.string().min(1, 'must not be empty'),
    // Tabular datasets often store arguments as a struct rather than JSON text.
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  }),
});

/** A message in the OpenAI chat shape, as found in datasets (a little looser than the wire). */
export const OpenAIMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: ContentSchema }),
  z.object({ role: z.literal('user'), content: UserContentSchema }),
  z.object({
    role: z.literal('assistant'),
    content: ContentSchema.nullable().optional(),
    reasoning: z.string().nullable().optional(),
    reasoning_content: z.string().nullable().optional(),
    tool_calls: z.array(ToolCallInputSchema).nullable().optional(),
  }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string().min(1, 'must not be empty'),
    name: z.string().nullable().optional(),
    content: ContentSchema,
  }),
]);
export type OpenAIMessageInput = z.infer<typeof OpenAIMessageSchema>;

export type ConvertedMessages = { messages: Message[]; system?: string } | { reason: string };

/** Leading system messages become the system prompt; the rest map one to one. */
export function messagesFromOpenAI(inputs: readonly OpenAIMessageInput[]): ConvertedMessages {
  const systemParts: string[] = [];
  const messages: Message[] = [];
  for (const [index, input] of inputs.entries()) {
    if (isSystem(input)) {
      if (messages.length > 0)
        return { reason: `messages.${index}: a system message is only allowed at the start of the conversation` };
      systemParts.push(contentText(input.content));
      continue;
    }
    messages.push(convert(input));
  }
  return systemParts.length > 0 ? { messages, system: systemParts.join('\n\n') } : { messages };
}

type SystemInput = Extract<OpenAIMessageInput, { role: 'system' | 'developer' }>;

function isSystem(input: OpenAIMessageInput): input is SystemInput {
  return input.role === 'system' || input.role === 'developer';
}

function convert(input: Exclude<OpenAIMessageInput, SystemInput>): Message {
  switch (input.role) {
    case 'user':
      return { role: 'user', content: userContent(input.content) };
    case 'tool':
      return input.name
        ? { role: 'tool', tool_call_id: input.tool_call_id, name: input.name, content: contentText(input.content) }
        : { role: 'tool', tool_call_id: input.tool_call_id, content: contentText(input.content) };
    case 'assistant': {
      const message: Message = {
        role: 'assistant',
        content: input.content == null ? null : contentText(input.content),
      };
      const reasoning = input.reasoning ?? input.reasoning_content;
      if (reasoning) message.reasoning = reasoning;
      if (input.tool_calls && input.tool_calls.length > 0) message.tool_calls = input.tool_calls.map(toolCall);
      return message;
    }
  }
}

function toolCall(input: z.infer<typeof ToolCallInputSchema>): ToolCall {
  const args = input.function.arguments;
  return {
    id: input.id,
    type: 'function',
    function: {
      name: input.function.name,
      arguments: args === undefined ? '{}' : typeof args === 'string' ? args : JSON.stringify(args),
    },
  };
}

/** Parts are kept as they are when any is an image; text-only parts become one string as before. */
function userContent(content: string | ContentPart[]): string | ContentPart[] {
  if (typeof content === 'string' || content.some((part) => part.type === 'image_url')) return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function contentText(content: z.infer<typeof ContentSchema>): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}
