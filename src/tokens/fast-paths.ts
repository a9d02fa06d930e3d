import type { Tokenizer } from '@huggingface/tokenizers';

/**
 * Faster stand-ins for parts of @huggingface/tokenizers' encode, installed on a loaded tokenizer's
 * own objects: a profile of `traj compress` (docs/performance.md) spent ~60% of its CPU in them.
 *
 * - A Split → ByteLevel pre-tokenizer copies every pre-token list three times to flatten it, and
 *   its ByteLevel step maps each pre-token through TextEncoder, an Array of bytes and a join; here
 *   the steps run one after the other without flattening, and each UTF-16 unit is mapped to its
 *   UTF-8 bytes' characters directly.
 * - The BPE model's word cache is an LRU that deletes and re-inserts the key on every hit, and holds
 *   10,000 words; here a plain Map of 100,000 words, emptied when full.
 *
 * Each computes what it replaces, so the ids are the same. The parts are replaced only when they
 * have the shape this was written against (the library's 0.2 internals), and kept only when a probe
 * text covering every UTF-8 length encodes to the same ids as before; otherwise the library runs as
 * it ships.
 */
export function installFastPaths(tokenizer: Tokenizer): boolean {
  const internals = tokenizer as unknown as TokenizerInternals;
  const sequence = byteLevelSequence(internals.pre_tokenizer);
  const model = internals.model;
  if (!sequence || !hasWordCache(model)) return false;
  const expected: number[] = tokenizer.encode(PROBE, { add_special_tokens: false }).ids;
  const originals = { preTokenize: sequence.pre_tokenize, cache: model.cache };
  sequence.pre_tokenize = sequenceRunner(sequence);
  model.cache = new WordCache(WORD_CACHE_CAPACITY);
  const ids: number[] = tokenizer.encode(PROBE, { add_special_tokens: false }).ids;
  if (ids.length === expected.length && ids.every((id, index) => id === expected[index])) return true;
  sequence.pre_tokenize = originals.preTokenize;
  model.cache = originals.cache;
  return false;
}

/** ASCII, 2-, 3- and 4-byte characters, a lone surrogate each way, added tokens, long runs of spaces and lines. */
const PROBE =
  "Hello, wörld! It's 2024: ½ € 日本語 🎉👍🏽 \u{1F600}x \uD800 y \uDC00 z\r\n\t  indented\n\n<|im_start|>user\n" +
  'é'.repeat(40) +
  ' '.repeat(300) +
  'end<|im_end|>';

const WORD_CACHE_CAPACITY = 100_000;

type PreTokenize = (text: string | string[], options?: unknown) => string[];

interface StepInternals {
  pre_tokenize_text: (text: string, options?: unknown) => string[];
}

interface ByteLevelInternals extends StepInternals {
  byte_encoder: Record<number, string>;
  add_prefix_space: boolean;
  use_regex: boolean;
}

interface SequenceInternals {
  tokenizers: (StepInternals | null)[];
  pre_tokenize: PreTokenize;
}

interface WordCacheInternals {
  get(key: string): string[] | undefined;
  put(key: string, value: string[]): void;
  clear(): void;
}

interface ModelInternals {
  cache?: WordCacheInternals;
  bpe?: unknown;
}

interface TokenizerInternals {
  pre_tokenizer: Partial<SequenceInternals> | null;
  model: ModelInternals;
}

/** A sequence of pre-tokenizers ending in a ByteLevel step that maps bytes only (Qwen, Llama 3, GPT-4-style tokenizers). */
function byteLevelSequence(preTokenizer: TokenizerInternals['pre_tokenizer']): SequenceInternals | undefined {
  const steps = preTokenizer?.tokenizers;
  if (!Array.isArray(steps) || typeof preTokenizer?.pre_tokenize !== 'function') return undefined;
  if (!steps.every((step) => step === null || typeof step?.pre_tokenize_text === 'function')) return undefined;
  const last = steps[steps.length - 1] as Partial<ByteLevelInternals> | null;
  if (!last || typeof last.byte_encoder !== 'object') return undefined;
  if (last.add_prefix_space !== false || last.use_regex !== false) return undefined;
  return preTokenizer as SequenceInternals;
}

function hasWordCache(model: ModelInternals): model is ModelInternals & { cache: WordCacheInternals } {
  return typeof model.bpe === 'function' && typeof model.cache?.get === 'function';
}

/**
 * The sequence's pre-tokens: each step applied to every piece of the step before, as the library
 * does, with the pieces kept in one flat list (a step's own pre-tokens are a flat list already).
 */
function sequenceRunner(sequence: SequenceInternals): PreTokenize {
  const steps = sequence.tokenizers.filter((step): step is StepInternals => step !== null);
  const byteLevel = steps[steps.length - 1] as ByteLevelInternals;
  const mapBytes = byteLevelMapper(byteLevel.byte_encoder);
  return (text, options) => {
    let pieces = Array.isArray(text) ? text : [text];
    for (const step of steps) {
      if (step === byteLevel) pieces = pieces.map(mapBytes);
      else if (pieces.length === 1) pieces = step.pre_tokenize_text(pieces[0]!, options);
      else pieces = pieces.flatMap((piece) => step.pre_tokenize_text(piece, options));
    }
    return pieces;
  };
}

/** ByteLevel's mapping of one pre-token (its UTF-8 bytes, each to its printable character) without allocating the bytes. */
function byteLevelMapper(byteEncoder: Record<number, string>): (text: string) => string {
  const table = Array.from({ length: 256 }, (_, byte) => byteEncoder[byte]!);
  const tail = (bits: number) => table[0x80 | (bits & 0x3f)]!;
  return (text) => {
    let mapped = '';
    for (let index = 0; index < text.length; index++) {
      const unit = text.charCodeAt(index);
      if (unit < 0x80) mapped += table[unit];
      else if (unit < 0x800) mapped += table[0xc0 | (unit >> 6)]! + tail(unit);
      else if (unit >= 0xd800 && unit < 0xdc00 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
        const point = 0x10000 + ((unit - 0xd800) << 10) + (text.charCodeAt(++index) - 0xdc00);
        mapped += table[0xf0 | (point >> 18)]! + tail(point >> 12) + tail(point >> 6) + tail(point);
      } else {
        // A lone surrogate is U+FFFD in UTF-8, as TextEncoder writes it.
        const point = unit >= 0xd800 && unit < 0xe000 ? 0xfffd : unit;
        mapped += table[0xe0 | (point >> 12)]! + tail(point >> 6) + tail(point);
      }
    }
    return mapped;
  };
}

/** BPE results by word: a hit is one lookup; when full it starts over rather than tracking recency. */
class WordCache implements WordCacheInternals {
  private readonly words = new Map<string, string[]>();

  constructor(private readonly capacity: number) {}

  get(key: string): string[] | undefined {
    return this.words.get(key);
  }

  put(key: string, value: string[]): void {
    if (this.words.size >= this.capacity) this.words.clear();
    this.words.set(key, value);
  }

  clear(): void {
    this.words.clear();
  }
}
