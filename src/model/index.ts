export * from './messages.js';
export * from './types.js';
export { createModelClient, type ModelClientOptions } from './client.js';
export { apiKeyFor, isLocalEndpoint } from './api-key.js';
export { parseHermesToolCalls, INVALID_TOOL_CALL_NAME, type HermesParseResult } from './hermes.js';
export {
  extractReasoning,
  extractInlineReasoning,
  type ExtractedReasoning,
  type WireReasoningFields,
} from './reasoning.js';
export {
  DEFAULT_RETRY_DELAYS,
  backoffDelay,
  parseRetryAfter,
  type RetryDelays,
  type RetryEvent,
  type AttemptFailure,
} from './retry.js';
export { toWireMessages } from './wire.js';
export { isContextOverflow, describeFailure, type FailureDescription } from './context-overflow.js';
export {
  resolveContextLength,
  contextLengthFromModels,
  DEFAULT_CONTEXT_LENGTH,
  type ContextLength,
  type ContextLengthSource,
} from './context-length.js';
export { withCacheMarks, wantsCacheMarks } from './prompt-caching.js';
export { pricedUsage, costOf } from './pricing.js';
export {
  CompletionTokensSchema,
  TopLogprobSchema,
  tokenRequestFields,
  type CompletionTokens,
  type ResponseTokens,
  type TopLogprob,
} from './completion-tokens.js';
