export { ChatTokenizer, loadChatTokenizer, type RenderOptions } from './chat-tokenizer.js';
export { templateMessages } from './template-messages.js';
export { tokenizerFiles, type TokenizerFiles, type TokenizerSourceOptions } from './tokenizer-files.js';
export {
  describeDrift,
  tokenTrace,
  type TokenDrift,
  type TokenTrace,
  type TraceInput,
  type TraceOutcome,
} from './token-trace.js';
