import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';
import { installFastPaths } from '../../src/tokens/fast-paths.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';

function qwen3Tokenizer(): Tokenizer {
  const read = (name: string) => JSON.parse(readFileSync(join(QWEN3_FOLDER, name), 'utf8')) as Record<string, unknown>;
  return new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
}

/** A seeded generator (mulberry32), so a failure names texts that can be made again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Code units from every UTF-8 length and the surrogate range (paired and lone), with spaces and newlines. */
const RANGES: [number, number][] = [
  [0x00, 0x7f],
  [0x20, 0x7e],
  [0x80, 0x7ff],
  [0x800, 0xd7ff],
  [0xd800, 0xdfff],
  [0xe000, 0xffff],
];

function randomText(next: () => number, length: number): string {
  let text = '';
  while (text.length < length) {
    const pick = next();
    if (pick < 0.1) text += [' ', '\n', '  ', '\r\n', '\t'][Math.floor(next() * 5)];
    else if (pick < 0.15) text += String.fromCodePoint(0x10000 + Math.floor(next() * 0xfffff));
    else if (pick < 0.18) text += ['<|im_start|>', '<|im_end|>', '<think>'][Math.floor(next() * 3)];
    else {
      const [low, high] = RANGES[Math.floor(next() * RANGES.length)]!;
      text += String.fromCharCode(low + Math.floor(next() * (high - low + 1)));
    }
  }
  return text;
}

test("Qwen3's tokenizer with the fast paths gives the ids the library gives, on 2,000 random texts and real ones", () => {
  const plain = qwen3Tokenizer();
  const fast = qwen3Tokenizer();
  assert.equal(installFastPaths(fast), true, 'the fast paths install on a Split → ByteLevel BPE tokenizer');
  const next = random(40);
  const texts = [
    ...Array.from({ length: 2000 }, () => randomText(next, 1 + Math.floor(next() * 200))),
    "def main():\n    print('héllo, wörld')  # 日本語\n\n\n    return 42\n",
    `${'alpha beta gamma delta epsilon 7\n'.repeat(190)}`,
    ' '.repeat(1000),
    '🎉'.repeat(300),
  ];
  for (const [index, text] of texts.entries()) {
    // The same text twice: the second encode is served from the word cache.
    for (const round of [0, 1])
      assert.deepEqual(
        fast.encode(text, { add_special_tokens: false }).ids,
        plain.encode(text, { add_special_tokens: false }).ids,
        `text ${index} (round ${round}): ${JSON.stringify(text).slice(0, 200)}`,
      );
  }
});

test('a tokenizer of another shape (no ByteLevel step) is left as the library built it', () => {
  const make = () =>
    new Tokenizer(
      {
        model: { type: 'WordLevel', vocab: { '[UNK]': 0, hello: 1, world: 2 }, unk_token: '[UNK]' },
        pre_tokenizer: { type: 'Whitespace' },
        normalizer: null,
        added_tokens: [],
        decoder: null,
        post_processor: null,
      },
      {},
    );
  const tokenizer = make();
  assert.equal(installFastPaths(tokenizer), false);
  assert.deepEqual(
    tokenizer.encode('hello world', { add_special_tokens: false }).ids,
    make().encode('hello world', { add_special_tokens: false }).ids,
  );
});

test("ChatTokenizer.count is the length of encode's ids, special tokens in the text included", async () => {
  const tokenizer = await qwen3();
  const next = random(41);
  for (let index = 0; index < 500; index++) {
    const text = randomText(next, 1 + Math.floor(next() * 300));
    assert.equal(tokenizer.count(text), tokenizer.encode(text).length, JSON.stringify(text).slice(0, 200));
  }
  assert.equal(tokenizer.count('<|im_start|>user\nhi<|im_end|>'), 5);
});
