import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAgent } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/client.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { builtinTools, readFileTool, terminalTool } from '../../src/tools/index.js';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';

/** The demo path end to end: the echo script drives the real loop, tools and a local sandbox. */
test('the echo script drives a real agent run: terminal echo, then a final answer quoting its output', async () => {
  const server = await startScriptedServer(echoScript);
  const sandbox = await createLocalSandbox();
  try {
    const model = createModelClient({ base_url: server.url, model: 'traj-scripted' }, { env: {} });
    for (const tools of [await builtinTools(), [terminalTool]]) {
      const result = await runAgent({
        model,
        tools: [...tools],
        sandbox,
        maxTurns: 5,
        messages: [
          { role: 'system', content: 'You are a test.' },
          { role: 'user', content: 'Print the word pineapple' },
        ],
      });
      assert.equal(result.finishReason, 'stop', JSON.stringify(result.error));
      assert.equal(result.turns, 2);
      assert.deepEqual(
        result.toolCalls.map((call) => [call.name, call.ok]),
        [['terminal', true]],
      );
      const final = result.messages.at(-1)!;
      assert.equal(final.role, 'assistant');
      assert.equal(final.content, 'The tool printed: Print the word pineapple');
      assert.match(final.role === 'assistant' ? (final.reasoning ?? '') : '', /report what it printed/);
    }
    const withoutTerminal = await runAgent({
      model,
      tools: [readFileTool],
      sandbox,
      maxTurns: 5,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    assert.equal(withoutTerminal.turns, 1);
    assert.equal(
      withoutTerminal.messages.at(-1)!.content,
      `You wrote: "Hello there". (scripted answer from traj's mock server)`,
    );
    assert.equal(server.requestCount(), 5);
  } finally {
    await sandbox.dispose();
    await server.close();
  }
});
