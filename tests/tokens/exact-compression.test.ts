import assert from 'node:assert/strict';
import { test } from 'node:test';
import { estimateMessageTokens, estimateToolTokens, runAgent, SUMMARIZER_PROMPT } from '../../src/agent/index.js';
import { createModelClient, type Message } from '../../src/model/index.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import { startScriptedServer, type Script } from '../../src/testing/index.js';
import type { ChatTokenizer } from '../../src/tokens/index.js';
import { qwen3 } from '../helpers/qwen3.js';

/** Three echo steps, then done; usage is always 1 token, so only a tokenizer can know the size. */
const script: Script = (request) => {
  if (request.messages[0]?.content === SUMMARIZER_PROMPT) return { content: 'summary: three echoes ran' };
  const summarised = request.messages.some((message) => String(message.content).includes('three echoes ran'));
  const steps = summarised ? 3 : request.messages.filter((message) => message.role === 'tool').length;
  const usage = { prompt_tokens: 1, completion_tokens: 1 };
  if (steps < 3) return { tool_calls: [{ name: 'terminal', arguments: { command: `echo step-${steps}` } }], usage };
  return { content: 'done', usage };
};

async function run(t: { after(fn: () => unknown): void }, tokenizer: ChatTokenizer, contextLength?: number) {
  const server = await startScriptedServer(script);
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: 'qwen3', api_key_env: 'NO_KEY', max_retries: 0 });
  const tools = (await loadToolRegistry()).select(['terminal'], { env: process.env });
  const messages: Message[] = [
    { role: 'system', content: 'You are a test agent.' },
    { role: 'user', content: 'Echo three steps, then say done.' },
  ];
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 6,
    context:
      contextLength === undefined
        ? undefined
        : {
            contextLength,
            threshold: 0.5,
            keepLastTurns: 1,
            summarize: async () => ({ text: 'summary: three echoes ran' }),
            countRequest: (view, specs) => tokenizer.countRequest(view, specs),
          },
  });
  return { result, specs: tools.map(toolSpec) };
}

test('with the tokenizer set, compression.threshold triggers at the exact token count of the request', async (t) => {
  const tokenizer = await qwen3();
  const probe = await run(t, tokenizer);
  assert.equal(probe.result.finishReason, 'stop', JSON.stringify(probe.result.messages.slice(2, 5)));
  // The fourth (largest) request: system, user and three tool steps.
  const fourth = probe.result.messages.slice(0, 8);
  const exact = tokenizer.countRequest(fourth, probe.specs);
  assert.equal(exact, tokenizer.encode(tokenizer.render(fourth, probe.specs, { addGenerationPrompt: true })).length);
  assert.notEqual(exact, estimateMessageTokens(fourth) + estimateToolTokens(probe.specs), 'the estimate is not exact');

  // A limit of exactly that many tokens (0.5 of twice it) is not passed: no compression.
  const at = await run(t, tokenizer, exact * 2);
  assert.equal(at.result.finishReason, 'stop');
  assert.deepEqual(at.result.compressions, []);
  // One token less and the fourth call compresses, having counted exactly that request.
  const below = await run(t, tokenizer, exact * 2 - 2);
  assert.equal(below.result.finishReason, 'stop');
  assert.equal(below.result.compressions?.length, 1);
  const compression = below.result.compressions![0]!;
  assert.equal(compression.at_call, 4);
  assert.equal(compression.tokens_before, exact);
});
