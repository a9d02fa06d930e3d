import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callTool, conversationScript, reply, type Script } from '../../src/testing/index.js';
import { scriptedLogprob } from '../../src/testing/vllm-tokens.js';
import { tokenTrace, type ChatTokenizer } from '../../src/tokens/index.js';
import { qwen3 } from '../helpers/qwen3.js';
import { qwen3Rollout } from '../helpers/qwen3-rollout.js';

async function rollout(
  t: { after(fn: () => unknown): void },
  tokenizer: ChatTokenizer,
  script: Script,
  stream = false,
) {
  const { result, specs, requests } = await qwen3Rollout(t, tokenizer, script, stream);
  return { result, specs, server: { requests } };
}

const SCRIPT = conversationScript([
  callTool('terminal', { command: 'echo hi' }, { reasoning_content: 'I will run echo.' }),
  reply('The command printed hi.', { reasoning_content: 'It printed hi.' }),
]);

/** Each assistant span of a Qwen3 token list: after `<|im_start|>assistant\n`, through `<|im_end|>`. */
function assistantMask(tokenizer: ChatTokenizer, ids: number[]): number[] {
  const header = tokenizer.encode('<|im_start|>assistant\n');
  const end = tokenizer.eosId;
  const mask = ids.map(() => 0);
  for (let position = 0; position < ids.length; position++) {
    if (!header.every((id, offset) => ids[position + offset] === id)) continue;
    let cursor = position + header.length;
    while (cursor < ids.length && ids[cursor] !== end) mask[cursor++] = 1;
    if (cursor < ids.length) mask[cursor] = 1;
    position = cursor;
  }
  return mask;
}

for (const stream of [false, true]) {
  test(`a multi-turn tool rollout with vLLM's token ids round-trips through Qwen3's template (${stream ? 'streamed' : 'whole'})`, async (t) => {
    const tokenizer = await qwen3();
    const { result, specs, server } = await rollout(t, tokenizer, SCRIPT, stream);
    assert.equal(result.finishReason, 'stop');
    const request = server.requests[0]!;
    assert.equal(request.logprobs, true);
    assert.equal(request.top_logprobs, 2);
    assert.equal(request.return_token_ids, true);
    assert.equal(request.return_tokens_as_token_ids, true);

    // Stored beside each assistant message: its ids, logprobs and finish reason.
    const completions = result.completions!;
    assert.deepEqual(
      completions.map((completion) => [completion.message, completion.finish_reason]),
      [
        [2, 'tool_calls'],
        [4, 'stop'],
      ],
    );
    for (const completion of completions) {
      assert.deepEqual(completion.logprobs, completion.token_ids!.map(scriptedLogprob));
      assert.equal(completion.top_logprobs!.length, completion.token_ids!.length);
      assert.equal(completion.top_logprobs![0]!.length, 2);
      assert.equal(completion.top_logprobs![0]![0]!.token, `token_id:${completion.token_ids![0]}`);
    }
    // The decoded ids are the recorded assistant turns, written out by hand from the record.
    const [first, second] = completions;
    assert.equal(
      tokenizer.decode(first!.token_ids!),
      '<think>\nI will run echo.\n</think>\n\n<tool_call>\n{"name": "terminal", "arguments": {"command": "echo hi"}}\n</tool_call><|im_end|>',
    );
    const final = result.messages[4]!;
    assert.equal(final.role === 'assistant' && final.content, 'The command printed hi.');
    assert.equal(
      tokenizer.decode(second!.token_ids!),
      `<think>\nIt printed hi.\n</think>\n\n${final.content}<|im_end|>`,
    );

    const outcome = tokenTrace(tokenizer, { messages: result.messages, tools: specs, completions });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.reason);
    const trace = outcome.trace;
    assert.deepEqual(trace.drift, []);
    const rendering = tokenizer.render(result.messages, specs, { addGenerationPrompt: false });
    const all = [...trace.promptIds, ...trace.completionIds];
    assert.deepEqual(all, tokenizer.encode(rendering), 'prompt_ids + completion_ids = the rendering, tokenised');
    assert.equal(tokenizer.decode(all), rendering);
    // The prompt is the first request, exactly as the server tokenised it.
    assert.deepEqual(
      trace.promptIds,
      tokenizer.encode(tokenizer.render(result.messages.slice(0, 2), specs, { addGenerationPrompt: true })),
    );
    // The mask covers exactly the assistant spans, and the endpoint's ids fill them.
    const expectedMask = assistantMask(tokenizer, all).slice(trace.promptIds.length);
    assert.deepEqual(trace.completionMask, expectedMask);
    const masked = trace.completionIds.filter((_, position) => trace.completionMask[position] === 1);
    assert.deepEqual(masked, [...first!.token_ids!, ...second!.token_ids!]);
    const logprobs = trace.completionLogprobs.filter((_, position) => trace.completionMask[position] === 1);
    assert.deepEqual(logprobs, [...first!.logprobs!, ...second!.logprobs!]);
    assert.ok(
      trace.completionLogprobs.every((value, position) => (trace.completionMask[position] === 1) === (value !== null)),
    );
  });
}

test('ids that decode to the same text but differ from re-tokenisation are reported as drift, and kept', async (t) => {
  const tokenizer = await qwen3();
  // The final turn's ids split " printed" in two: the same text, other tokens.
  const honest = tokenizer.encode('<think>\nIt printed hi.\n</think>\n\nThe command printed hi.<|im_end|>');
  const split = [
    ...tokenizer.encode('<think>\nIt'),
    ...tokenizer.encode(' pr'),
    ...tokenizer.encode('inted'),
    ...tokenizer.encode(' hi.\n</think>\n\nThe command printed hi.<|im_end|>'),
  ];
  assert.equal(tokenizer.decode(split), tokenizer.decode(honest));
  assert.notDeepEqual(split, honest);
  const script = conversationScript([
    callTool('terminal', { command: 'echo hi' }, { reasoning_content: 'I will run echo.' }),
    reply('The command printed hi.', { reasoning_content: 'It printed hi.', token_ids: split }),
  ]);
  const { result, specs } = await rollout(t, tokenizer, script);
  const outcome = tokenTrace(tokenizer, { messages: result.messages, tools: specs, completions: result.completions! });
  assert.ok(outcome.ok);
  const position = tokenizer.encode('<think>\nIt').length;
  assert.deepEqual(outcome.trace.drift, [
    { message: 4, position, endpoint: split[position], template: honest[position] },
  ]);
  const masked = outcome.trace.completionIds.filter((_, index) => outcome.trace.completionMask[index] === 1);
  assert.deepEqual(masked.slice(-split.length), split, "the endpoint's ids stand in the mask");
});
