import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModelClient } from '../../src/model/client.js';
import { extractReasoning } from '../../src/model/reasoning.js';
import type { ModelDelta } from '../../src/model/types.js';
import type { ScriptedReply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

interface ReasoningCase {
  name: string;
  reply: ScriptedReply;
  content: string | null;
  reasoning: string | undefined;
}

const CASES: ReasoningCase[] = [
  {
    name: 'reasoning_content field',
    reply: { reasoning_content: 'first I add', content: '4' },
    content: '4',
    reasoning: 'first I add',
  },
  {
    name: 'reasoning field',
    reply: { reasoning: 'OpenRouter style', content: 'done' },
    content: 'done',
    reasoning: 'OpenRouter style',
  },
  {
    name: 'reasoning_details[].text',
    reply: {
      reasoning_details: [
        { type: 'reasoning.text', text: 'step one' },
        { type: 'reasoning.text', text: 'step two' },
      ],
      content: 'ok',
    },
    content: 'ok',
    reasoning: 'step one\nstep two',
  },
  {
    name: 'reasoning and reasoning_details together count once',
    reply: {
      reasoning: 'same text',
      reasoning_details: [{ type: 'reasoning.text', text: 'same text' }],
      content: 'ok',
    },
    content: 'ok',
    reasoning: 'same text',
  },
  {
    name: 'inline <think>',
    reply: { content: '<think>\nlet me see\n</think>\n\nThe answer is 4.' },
    content: 'The answer is 4.',
    reasoning: 'let me see',
  },
  {
    name: 'inline <REASONING_SCRATCHPAD>',
    reply: { content: '<REASONING_SCRATCHPAD>plan the patch</REASONING_SCRATCHPAD>Patched.' },
    content: 'Patched.',
    reasoning: 'plan the patch',
  },
  {
    name: 'unclosed leading <think>',
    reply: { content: '<think>still thinking when the tokens ran out' },
    content: null,
    reasoning: 'still thinking when the tokens ran out',
  },
  {
    name: 'closing tag only (template opened it)',
    reply: { content: 'worked it out</think>\nFinal.' },
    content: 'Final.',
    reasoning: 'worked it out',
  },
  {
    name: 'field and inline tags combine',
    reply: { reasoning_content: 'from the field', content: '<think>from the tag</think>visible' },
    content: 'visible',
    reasoning: 'from the field\n\nfrom the tag',
  },
  {
    name: 'no reasoning at all',
    reply: { content: 'plain <b>text</b>' },
    content: 'plain <b>text</b>',
    reasoning: undefined,
  },
];

for (const stream of [false, true]) {
  test(`reasoning from every source, ${stream ? 'streamed' : 'not streamed'}, kept apart from the content`, async () => {
    await withServer(
      CASES.map((entry) => entry.reply),
      async (server) => {
        const client = createModelClient(endpointFor(server), FAST);
        for (const entry of CASES) {
          const deltas: ModelDelta[] = [];
          const response = await client.complete({
            messages: HELLO,
            ...(stream ? { onDelta: (delta: ModelDelta) => deltas.push(delta) } : {}),
          });
          assert.equal(response.message.content, entry.content, `${entry.name}: content`);
          assert.equal(response.message.reasoning, entry.reasoning, `${entry.name}: reasoning`);
          assert.equal(
            'reasoning' in response.message,
            entry.reasoning !== undefined,
            `${entry.name}: no empty reasoning key`,
          );
          if (stream && (entry.reply.reasoning_content || entry.reply.reasoning)) {
            const streamed = deltas
              .filter((delta) => delta.type === 'reasoning')
              .map((delta) => (delta as { text: string }).text)
              .join('');
            assert.equal(
              streamed,
              entry.reply.reasoning_content ?? entry.reply.reasoning,
              `${entry.name}: reasoning deltas`,
            );
          }
        }
        assert.equal(server.requestCount(), CASES.length);
      },
    );
  });
}

test('several inline blocks are all collected, in order', () => {
  const extracted = extractReasoning({ content: '<think>a</think>one <think>b</think>two' });
  assert.equal(extracted.reasoning, 'a\n\nb');
  assert.equal(extracted.content, 'one two');
});
