/**
 * Does a failed request say the conversation no longer fits the model's context window? Servers
 * answer 400 (some 413) with their own wording: OpenAI and vLLM "maximum context length is N
 * tokens", OpenRouter "This endpoint's maximum context length", llama.cpp
 * "exceeds the available context size" (type exceed_context_size_error), newer vLLM "longer than
 * the maximum model length". A pure function of the status, message and error code, so the agent
 * loop recognises an overflow whatever the client or the pipeline made of it.
 */
export interface FailureDescription {
  status?: number;
  message: string;
  /** An error code where one is known (`context_length_exceeded`, `context_overflow`, …). */
  code?: string;
}

const OVERFLOW_CODES = new Set([
  'context_length_exceeded',
  'context_overflow',
  'exceed_context_size_error',
  'string_above_max_length',
]);

const OVERFLOW_WORDING = [
  /maximum context length is \d+/i,
  /exceeds? (?:the )?(?:available )?context (?:size|length|window)/i,
  /longer than the maximum model length/i,
  /context[_ ]length[_ ]exceeded/i,
  /prompt is too long/i,
  /too many tokens.*context/i,
  /input (?:is )?too long for (?:the )?(?:model|context)/i,
];

export function isContextOverflow(failure: FailureDescription): boolean {
  if (failure.status !== undefined && failure.status !== 400 && failure.status !== 413) return false;
  if (failure.code && OVERFLOW_CODES.has(failure.code)) return true;
  return OVERFLOW_WORDING.some((pattern) => pattern.test(failure.message));
}

/** Read a thrown value (a ModelError, a serialised error, an SDK error) as a failure description. */
export function describeFailure(error: unknown): FailureDescription | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const value = error as { message?: unknown; code?: unknown; status?: unknown; details?: { status?: unknown } };
  if (typeof value.message !== 'string') return undefined;
  const status =
    typeof value.status === 'number'
      ? value.status
      : typeof value.details?.status === 'number'
        ? value.details.status
        : undefined;
  return {
    message: value.message,
    ...(status === undefined ? {} : { status }),
    ...(typeof value.code === 'string' ? { code: value.code } : {}),
  };
}
