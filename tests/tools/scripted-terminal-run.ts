import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { runAgent } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startScriptedServer, type ScriptFunction } from '../../src/testing/index.js';
import { loadToolRegistry, disposeToolState, type ToolRegistry } from '../../src/tools/index.js';

/**
 * The agent loop over `sandbox` with the terminal toolset, its model a scripted server: the tool
 * results the model read, parsed, once it stopped. The sandbox is disposed when the test ends.
 */
export async function scriptedTerminalRun<Result>(
  t: TestContext,
  sandbox: Sandbox,
  script: ScriptFunction,
  prompt: string,
  registry?: ToolRegistry,
): Promise<Result[]> {
  registry ??= await loadToolRegistry();
  const server = await startScriptedServer(script);
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 0 });
  const state = new Map<string, unknown>();
  const result = await runAgent({
    model,
    tools: registry.select(['terminal'], { env: process.env }),
    sandbox,
    state,
    maxTurns: 10,
    messages: [
      { role: 'system', content: 'test' },
      { role: 'user', content: prompt },
    ],
  });
  await disposeToolState(state);
  assert.equal(result.finishReason, 'stop');
  return result.messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(String(message.content)) as Result);
}
