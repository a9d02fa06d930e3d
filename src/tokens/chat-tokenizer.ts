import type { Template } from '@huggingface/jinja';
import type { Tokenizer } from '@huggingface/tokenizers';
import { ConfigError, errorMessage } from '../errors.js';
import type { Message, ToolSpec } from '../model/messages.js';
import { installFastPaths } from './fast-paths.js';
import { templateMessages } from './template-messages.js';
import { tokenizerFiles, type TokenizerFiles, type TokenizerSourceOptions } from './tokenizer-files.js';

export interface RenderOptions {
  /** End with the template's opening of an assistant turn (what a server appends before generating). */
  addGenerationPrompt: boolean;
}

/**
 * A model's own tokenizer and chat template: `tokenizer.json` through @huggingface/tokenizers,
 * the template through @huggingface/jinja, rendered with the variables transformers passes
 * (`messages`, `tools`, `add_generation_prompt`, the special tokens).
 */
export class ChatTokenizer {
  /** The token that closes an assistant turn (tokenizer_config.json's `eos_token`). */
  readonly eosToken: string;
  readonly eosId: number;
  private readonly tokenizer: Tokenizer;
  private readonly template: Template;
  private readonly specialTokens: Record<string, string>;

  constructor(
    files: TokenizerFiles,
    readonly source: string,
    packages: TokenizerPackages,
  ) {
    try {
      this.tokenizer = new packages.Tokenizer(files.tokenizer, files.config);
      installFastPaths(this.tokenizer);
      this.template = new packages.Template(files.template);
    } catch (error) {
      throw new ConfigError(`tokenizer '${source}': cannot load it from ${files.folder} (${errorMessage(error)})`, {
        code: 'tokenizer_invalid',
        cause: error,
      });
    }
    this.specialTokens = specialTokens(files.config);
    const eos = this.specialTokens.eos_token;
    const eosId = eos === undefined ? undefined : this.tokenizer.token_to_id(eos);
    if (eos === undefined || eosId === undefined)
      throw new ConfigError(`tokenizer '${source}': tokenizer_config.json names no eos_token in the vocabulary`, {
        code: 'tokenizer_invalid',
      });
    this.eosToken = eos;
    this.eosId = eosId;
  }

  /** Ids of text exactly as written: special tokens in the text are recognised, none are added. */
  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** How many ids `encode(text)` gives, without mapping the tokens to ids. */
  count(text: string): number {
    return this.tokenizer.tokenize(text, { add_special_tokens: false }).length;
  }

  /** Text of ids; special tokens kept unless asked otherwise. */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    return this.tokenizer.decode([...ids], {
      skip_special_tokens: options.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: false,
    });
  }

  render(messages: readonly Message[], tools: readonly ToolSpec[] | undefined, options: RenderOptions): string {
    return this.template.render({
      ...this.specialTokens,
      messages: templateMessages(messages),
      ...(tools && tools.length > 0 ? { tools } : {}),
      add_generation_prompt: options.addGenerationPrompt,
    });
  }

  /** The exact size of a request: the rendered conversation with the generation prompt, tokenised. */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[] | undefined): number {
    return this.count(this.render(messages, tools, { addGenerationPrompt: true }));
  }
}

/** bos/eos/pad/unk as strings (tokenizer_config.json writes them as strings or AddedToken objects). */
function specialTokens(config: Record<string, unknown>): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const name of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const value = config[name];
    const text = typeof value === 'string' ? value : (value as { content?: unknown } | null)?.content;
    if (typeof text === 'string') tokens[name] = text;
  }
  return tokens;
}

interface TokenizerPackages {
  Tokenizer: typeof Tokenizer;
  Template: typeof Template;
}

/** Loaded with the first tokenizer, not with every run that imports this room. */
function tokenizerPackages(): Promise<TokenizerPackages> {
  return Promise.all([import('@huggingface/tokenizers'), import('@huggingface/jinja')]).then(([tokenizers, jinja]) => ({
    Tokenizer: tokenizers.Tokenizer,
    Template: jinja.Template,
  }));
}

/** One load per spec per thread: tokenizer.json is megabytes of JSON (Qwen3's loads in ~0.5 s). */
const loaded = new Map<string, Promise<ChatTokenizer>>();

export function loadChatTokenizer(spec: string, options: TokenizerSourceOptions = {}): Promise<ChatTokenizer> {
  let tokenizer = loaded.get(spec);
  if (!tokenizer) {
    tokenizer = Promise.all([tokenizerFiles(spec, options), tokenizerPackages()]).then(
      ([files, packages]) => new ChatTokenizer(files, spec, packages),
    );
    loaded.set(spec, tokenizer);
    // A failed load (a network fault) is not remembered: the next caller tries again.
    tokenizer.catch(() => loaded.delete(spec));
  }
  return tokenizer;
}
