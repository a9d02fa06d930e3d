import { z } from 'zod';

/** OpenAI chat-completions message shapes, the one format traj keeps conversations in. */
export const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ImagePartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
/** OpenAI content parts of a user message: text and images (a URL or a data URL). */
export const ContentPartSchema = z.discriminatedUnion('type', [TextPartSchema, ImagePartSchema]);
export type ContentPart = z.infer<typeof ContentPartSchema>;

export const SystemMessageSchema = z.object({ role: z.literal('system'), content: z.string() });
/** Text, or content parts when the message carries images (kept exactly as the dataset gave them). */
export const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(ContentPartSchema)]),
});
export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  /** Reasoning kept apart from the visible content, whatever field, part or tag it came from. */
  reasoning: z.string().optional(),
  /** The provider's structured reasoning blocks (OpenRouter), as sent: signatures and encrypted data kept. */
  reasoning_details: z.array(z.record(z.string(), z.unknown())).optional(),
  /** URLs (or data URLs) of image parts of the content. */
  images: z.array(z.string()).optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  /**
   * Fields sent with this message on later requests, exactly (endpoint.reasoning_echo): the
   * reasoning passed back to a provider that needs it, e.g. `reasoning_details` or
   * `reasoning_content`, or `content` as the parts it arrived in.
   */
  echo: z.record(z.string(), z.unknown()).optional(),
});
export const ToolMessageSchema = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  name: z.string().optional(),
  content: z.string(),
});
export const MessageSchema = z.discriminatedUnion('role', [
  SystemMessageSchema,
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
]);

export type SystemMessage = z.infer<typeof SystemMessageSchema>;
export type UserMessage = z.infer<typeof UserMessageSchema>;
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
export type ToolMessage = z.infer<typeof ToolMessageSchema>;
export type Message = z.infer<typeof MessageSchema>;

/** A tool as offered to the model (OpenAI `tools[]` entry). */
export const ToolSpecSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

export const CostSourceSchema = z.enum(['provider', 'pricing', 'mixed', 'unknown']);
export type CostSource = z.infer<typeof CostSourceSchema>;

export const UsageSchema = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  reasoning_tokens: z.number().int().nonnegative(),
  /** Prompt tokens the provider served from its cache (part of prompt_tokens). Absent in older records. */
  cached_tokens: z.number().int().nonnegative().default(0),
  /**
   * What the calls cost in USD: the provider's figure when it reports one (OpenRouter's credits are
   * USD), else computed from the run's `pricing:`; the sum of the calls whose cost is known, null
   * when none was. `unpriced_models` says which calls it leaves out.
   */
  cost: z.number().nonnegative().nullable().default(null),
  /**
   * Where `cost` came from: provider, pricing, both (mixed), or unknown (no call's cost was known).
   * Optional: records written before cost accounting lack it, and so do usages built by hand.
   */
  cost_source: CostSourceSchema.nullable().optional(),
  /** Models called with no cost reported and no price in `pricing:`: their calls are not in `cost`. */
  unpriced_models: z.array(z.string()).optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

export function emptyUsage(): Usage {
  return {
    prompt_tokens: 0,
    completion_tokens: 0,
    reasoning_tokens: 0,
    cached_tokens: 0,
    cost: null,
    cost_source: null,
    unpriced_models: [],
  };
}

/** Sums in place; a cost stays null only while no call's cost was known. */
export function addUsage(into: Usage, more: Usage): Usage {
  into.prompt_tokens += more.prompt_tokens;
  into.completion_tokens += more.completion_tokens;
  into.reasoning_tokens += more.reasoning_tokens;
  into.cached_tokens = (into.cached_tokens ?? 0) + (more.cached_tokens ?? 0);
  if (more.cost !== null && more.cost !== undefined) into.cost = roundCost((into.cost ?? 0) + more.cost);
  into.cost_source = combinedSource(into.cost_source ?? null, more.cost_source ?? null);
  for (const model of more.unpriced_models ?? []) {
    into.unpriced_models ??= [];
    if (!into.unpriced_models.includes(model)) into.unpriced_models.push(model);
  }
  return into;
}

function combinedSource(a: CostSource | null, b: CostSource | null): CostSource | null {
  if (a === null || a === b) return b ?? a;
  if (b === null) return a;
  // Known + unknown is still a partial sum of known costs: `unpriced_models` names what is missing.
  if (a === 'unknown') return b;
  if (b === 'unknown') return a;
  return 'mixed';
}

/** Sums of float costs drift (0.1 + 0.2); twelve decimals keep a sub-cent price exact. */
function roundCost(value: number): number {
  return Math.round(value * 1e12) / 1e12;
}

/** The text of a user message's content; each image part becomes `imageMarker` (Hermes/LLaVA `<image>`). */
export function contentText(content: string | readonly ContentPart[], imageMarker = '<image>'): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : imageMarker)).join(partSeparator(content));
}

/** Image URLs of a user message's content, in order. */
export function contentImages(content: string | readonly ContentPart[]): string[] {
  return typeof content === 'string'
    ? []
    : content.flatMap((part) => (part.type === 'image_url' ? [part.image_url.url] : []));
}

// Parts are separate blocks: an image marker on its own line reads as Hermes/LLaVA datasets write it.
function partSeparator(content: readonly ContentPart[]): string {
  return content.some((part) => part.type === 'image_url') ? '\n' : '';
}
