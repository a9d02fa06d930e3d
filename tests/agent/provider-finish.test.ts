import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { runAgent } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/index.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { fixtureReplayScript, loadProviderFixtures, startScriptedServer } from '../../src/testing/index.js';
import { buildRecord, validateRecord } from '../../src/trajectory/index.js';
import { projectRoot } from '../../src/util/paths.js';

const FIXTURES = loadProviderFixtures(join(projectRoot(), 'tests', 'fixtures', 'providers'));

async function run(t: { after(fn: () => unknown): void }, id: string, stream: boolean) {
  const server = await startScriptedServer(fixtureReplayScript(FIXTURES));
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: id, api_key_env: 'NO_KEY', max_retries: 0 });
  const result = await runAgent({
    model,
    tools: [],
    sandbox,
    maxTurns: 4,
    stream,
    onEvent: () => {},
    messages: [
      { role: 'system', content: 'test' },
      { role: 'user', content: 'go' },
    ],
  });
  const record = validateRecord(
    buildRecord({
      key: id,
      sample: 0,
      result,
      tools: [],
      toolsets: [],
      model: id,
      source: { dataset: 'x', row: 0, fields: {} },
    }),
  );
  return { result, record, server };
}

for (const stream of [false, true]) {
  for (const [id, reason] of [
    ['azure/content-filter', 'content_filter'],
    ['glm/sensitive-finish', 'sensitive'],
  ] as const) {
    test(`${reason} ends the rollout as sent, an agent outcome, never a stop (${stream ? 'streamed' : 'not streamed'})`, async (t) => {
      const { result, record, server } = await run(t, id, stream);
      assert.equal(result.finishReason, reason);
      assert.equal(result.apiCalls, 1, 'not retried as an empty answer');
      assert.equal(server.requestCount(), 1);
      assert.equal(record.finish_reason, reason);
      assert.equal(record.completed, false);
      assert.equal(record.partial, true);
      assert.equal(record.error, null);
    });
  }

  test(`magistral thinking parts land in the record and the ShareGPT view (${stream ? 'streamed' : 'not streamed'})`, async (t) => {
    const { record } = await run(t, 'mistral/magistral-thinking', stream);
    assert.equal(record.finish_reason, 'stop');
    assert.deepEqual(record.messages[2], {
      role: 'assistant',
      content: '2 + 2 = 4',
      reasoning: 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.',
    });
    assert.equal(
      record.conversations.at(-1)!.value,
      '<think>\nThe user is asking for 2+2. This is basic arithmetic. 2+2=4.\n</think>\n2 + 2 = 4',
    );
    assert.equal(record.has_reasoning, true);
    assert.deepEqual(record.usage, {
      prompt_tokens: 10,
      completion_tokens: 46,
      reasoning_tokens: 0,
      cached_tokens: 0,
      cost: null,
      cost_source: 'unknown',
      unpriced_models: ['mistral/magistral-thinking'],
    });
  });
}
