import type { Endpoint } from '../config/endpoint.js';
import type { Message, ToolSpec } from './messages.js';
import { withCacheMarks } from './prompt-caching.js';
import { tokenRequestFields, type ResponseTokens } from './completion-tokens.js';
import type { WireTimings, WireUsage } from './usage.js';

export type { WireTimings, WireUsage } from './usage.js';

/**
 * The OpenAI chat-completions wire format as traj reads it: looser than the SDK's types because
 * compatible servers add fields (`reasoning_content`, `reasoning`, `reasoning_details`).
 */
export interface WireToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface WireMessage {
  /** A string, null, or an array of parts (text, thinking, image_url). */
  content?: unknown;
  refusal?: string | null;
  /** OpenRouter's generated images. */
  images?: unknown;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: unknown[];
  tool_calls?: WireToolCall[] | null;
}

/** One assistant choice with its finish reason and the call's usage: what streaming assembles. */
export interface WireCompletion {
  message: WireMessage;
  finishReason: string | null;
  usage: WireUsage | undefined;
  /** llama.cpp's `timings` (its prompt cache hits are there). */
  timings?: WireTimings;
  /** vLLM's and SGLang's token ids and the logprobs, when the request asked for them. */
  tokens?: ResponseTokens;
}

/**
 * Messages as the server expects them: traj's `reasoning`, `reasoning_details`, `images` and the
 * tool-message `name` stay local; an assistant message's `echo` fields go out exactly as recorded.
 */
export function toWireMessages(messages: Message[]): Record<string, unknown>[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content,
          ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
          ...message.echo,
        };
      case 'tool':
        return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
      default:
        return { role: message.role, content: message.content };
    }
  });
}

/**
 * The request body: sampling params, then `extra_body` (it may override them), then the fields
 * traj owns, which nothing overrides.
 */
export function buildRequestBody(
  endpoint: Endpoint,
  messages: Message[],
  tools: ToolSpec[] | undefined,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (endpoint.temperature !== undefined) body.temperature = endpoint.temperature;
  if (endpoint.top_p !== undefined) body.top_p = endpoint.top_p;
  if (endpoint.max_tokens !== undefined) body.max_tokens = endpoint.max_tokens;
  if (endpoint.seed !== undefined) body.seed = endpoint.seed;
  Object.assign(body, tokenRequestFields(endpoint));
  Object.assign(body, endpoint.extra_body);
  body.model = endpoint.model;
  body.messages = withCacheMarks(endpoint, toWireMessages(messages));
  if (tools && tools.length > 0) body.tools = tools;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

const specTexts = new WeakMap<ToolSpec, string>();

/** The serialized `tools` array of one sequence of specs, reached spec by spec from the first. */
interface SpecsNode {
  bytes?: Buffer;
  next: WeakMap<ToolSpec, SpecsNode>;
}
const specSequences: SpecsNode = { next: new WeakMap() };
const BODY_END = Buffer.from('}');

/**
 * The request body as sent, in chunks for one socket write. Tool specs are the same objects call
 * after call (tool-spec.ts keeps one per tool), and serializing them was most of the body's cost:
 * the `tools` array is encoded once per sequence of specs and reused as is, so a call encodes only
 * its messages and settings (at 1,000 rollouts in flight, ~10 KB less to join, flatten and encode
 * per call). The chunks concatenated are the JSON of buildRequestBody.
 */
export function requestBodyChunks(
  endpoint: Endpoint,
  messages: Message[],
  tools: ToolSpec[] | undefined,
  stream: boolean,
): Buffer[] {
  if (!tools?.length) return [Buffer.from(JSON.stringify(buildRequestBody(endpoint, messages, tools, stream)))];
  // `model` is always there, so the object is never empty and the comma is right.
  const { tools: _offered, ...rest } = buildRequestBody(endpoint, messages, tools, stream);
  return [Buffer.from(`${JSON.stringify(rest).slice(0, -1)},"tools":`), toolsBytes(tools), BODY_END];
}

function toolsBytes(tools: ToolSpec[]): Buffer {
  let node = specSequences;
  for (const spec of tools) {
    let next = node.next.get(spec);
    if (!next) {
      next = { next: new WeakMap() };
      node.next.set(spec, next);
    }
    node = next;
  }
  node.bytes ??= Buffer.from(`[${tools.map(specText).join(',')}]`);
  return node.bytes;
}

function specText(spec: ToolSpec): string {
  let text = specTexts.get(spec);
  if (text === undefined) {
    text = JSON.stringify(spec);
    specTexts.set(spec, text);
  }
  return text;
}
