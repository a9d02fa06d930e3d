import { z } from 'zod';

/**
 * What the scripted server answers. A reply is a normal completion; a fault is an HTTP error, a
 * dropped connection or a delay. The schemas validate script files; the types serve code.
 */
export const ScriptedToolCallSchema = z
  .object({
    name: z.string().describe('the tool to call'),
    arguments: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .describe('an object (sent as JSON) or a raw string (sent as-is, e.g. malformed JSON)'),
    id: z.string().optional().describe('default call_<request index>_<position>'),
  })
  .strict();

export const ScriptedUsageSchema = z
  .object({
    prompt_tokens: z.number().int().nonnegative().optional(),
    completion_tokens: z.number().int().nonnegative().optional(),
    reasoning_tokens: z.number().int().nonnegative().optional(),
    cached_tokens: z.number().int().nonnegative().optional().describe('sent as prompt_tokens_details.cached_tokens'),
    cost: z.number().nonnegative().optional().describe("the provider's cost in USD, sent as usage.cost (OpenRouter)"),
  })
  .strict();

export const ScriptedReplySchema = z
  .object({
    // Lets the union below tell replies from faults by the `fault` key alone.
    fault: z.undefined().optional(),
    content: z.string().nullable().optional(),
    reasoning_content: z.string().optional(),
    reasoning: z.string().optional(),
    reasoning_details: z.array(z.record(z.string(), z.unknown())).optional(),
    tool_calls: z.array(ScriptedToolCallSchema).optional(),
    finish_reason: z
      .enum(['stop', 'length', 'tool_calls', 'content_filter'])
      .optional()
      .describe('default tool_calls when calls are given, else stop'),
    usage: ScriptedUsageSchema.optional().describe('default: estimated from text lengths (4 characters a token)'),
    token_ids: z
      .array(z.number().int().nonnegative())
      .optional()
      .describe("vLLM's `token_ids` to send instead of the tokenizer's (a server whose ids differ from its text)"),
  })
  .strict();

export const HttpFaultSchema = z
  .object({
    fault: z.literal('http'),
    status: z.number().int().min(400).max(599),
    body: z.unknown().optional().describe('a JSON value or a string; default {"error": {"message": ...}}'),
    headers: z.record(z.string(), z.string()).optional().describe('e.g. {"retry-after": "1"}'),
  })
  .strict();

export const DropFaultSchema = z.object({ fault: z.literal('drop') }).strict();

/** A body sent byte for byte: a recorded provider response, a malformed or oversized one. */
export const RawFaultSchema = z
  .object({
    fault: z.literal('raw'),
    status: z.number().int().min(100).max(599).optional().describe('default 200'),
    content_type: z.string().optional().describe('default application/json; text/event-stream for a recorded stream'),
    body: z.string().describe('sent as is'),
  })
  .strict();

export const DelayFaultSchema = z
  .object({
    fault: z.literal('delay'),
    ms: z.number().int().nonnegative(),
    get then() {
      return ScriptedResponseSchema;
    },
  })
  .strict();

export const ScriptedResponseSchema = z.discriminatedUnion('fault', [
  HttpFaultSchema,
  DropFaultSchema,
  DelayFaultSchema,
  RawFaultSchema,
  ScriptedReplySchema,
]);

export type ScriptedToolCall = z.infer<typeof ScriptedToolCallSchema>;
export type ScriptedUsage = z.infer<typeof ScriptedUsageSchema>;
export type ScriptedReply = z.infer<typeof ScriptedReplySchema>;
export type HttpFault = z.infer<typeof HttpFaultSchema>;
export type DropFault = z.infer<typeof DropFaultSchema>;
export type DelayFault = z.infer<typeof DelayFaultSchema>;
export type RawFault = z.infer<typeof RawFaultSchema>;
export type ScriptedFault = HttpFault | DropFault | DelayFault | RawFault;
export type ScriptedResponse = z.infer<typeof ScriptedResponseSchema>;

/** The chat request body as the server received it (only the fields scripts look at are typed). */
export interface ChatRequest {
  model?: string;
  messages: ChatRequestMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

/** What `ScriptedServer.requests` holds: each chat request body, as received. */
export type RecordedRequest = ChatRequest;

export interface ChatRequestMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [field: string]: unknown;
}

export interface ScriptContext {
  /** 0-based number of this chat request at the server (retries count). */
  index: number;
  /** 0-based turn of the conversation: the assistant messages already in the request. */
  turn: number;
}

export type ScriptFunction = (
  request: ChatRequest,
  context: ScriptContext,
) => ScriptedResponse | Promise<ScriptedResponse>;

/** A list is answered in order (one entry per request, retries included); a function decides per request. */
export type Script = ScriptedResponse[] | ScriptFunction;

export function isFault(response: ScriptedResponse): response is ScriptedFault {
  return response.fault !== undefined;
}

/** The answer for a request the script cannot serve: a 400 the client reports at once with this message. */
export function scriptError(message: string): HttpFault {
  return {
    fault: 'http',
    status: 400,
    body: { error: { message: `scripted server: ${message}`, type: 'script_error' } },
  };
}
