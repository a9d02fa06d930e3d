import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { executeRollout, type RolloutSettings } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import {
  callTool,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { DEFAULT_BUDGET } from '../../src/tools/budget.js';

/**
 * A rollout creates its sandbox folder while its first model call is out when it offers file
 * tools (their first call then finds it ready), and never when no offered tool uses a sandbox.
 * Local sandboxes go under TMPDIR: this file points it at a scratch folder of its own.
 */
const scratch = mkdtempSync(join(tmpdir(), 'traj-sandbox-start-'));
process.env.TMPDIR = scratch;
const services = createThreadServices();
after(async () => {
  await services.close();
  rmSync(scratch, { recursive: true, force: true });
});

const sandboxFolders = () => readdirSync(scratch).filter((name) => name.startsWith('traj-sbx-'));

function settings(baseUrl: string): RolloutSettings {
  return {
    run: 'rollout-sandbox-start-test',
    endpoint: {
      base_url: baseUrl,
      model: 'scripted',
      api_key_env: 'TRAJ_TEST_NO_KEY',
      timeout_ms: 60_000,
      max_retries: 0,
      tool_call_format: 'native',
    },
    maxTurns: 4,
    sandbox: { kind: 'local', local: { isolation: 'none' } },
    budget: DEFAULT_BUDGET,
    agent: 'model',
    toolConcurrency: 4,
  };
}

/** Holds the first model call until the test has looked at the temp dir; then one write_file, then an answer. */
async function heldRollout(t: { after(fn: () => unknown): void }, toolsets: string[]) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let firstCallArrived!: () => void;
  const arrived = new Promise<void>((resolve) => {
    firstCallArrived = resolve;
  });
  const server = await startScriptedServer(async (request: ChatRequest): Promise<ScriptedResponse> => {
    if (request.messages.some((message) => message.role === 'tool')) return reply('saved');
    firstCallArrived();
    await released;
    return toolsets.includes('file') ? callTool('write_file', { path: 'note.txt', content: 'hi\n' }) : reply('done');
  });
  t.after(() => server.close());
  const outcome = executeRollout(
    { key: 'k', sample: 0, toolsets, messages: [{ role: 'user', content: 'go' }], settings: settings(server.url) },
    services,
    new AbortController().signal,
  );
  await arrived;
  // Creation runs beside the call: give it a moment to land before looking.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const duringFirstCall = sandboxFolders();
  release();
  return { duringFirstCall, outcome: await outcome };
}

test('a rollout offering file tools has its sandbox folder before its first tool call', async (t) => {
  const { duringFirstCall, outcome } = await heldRollout(t, ['file']);
  assert.equal(duringFirstCall.length, 1, 'the folder exists while the first model call is out');
  assert.equal(outcome.result.finishReason, 'stop');
  assert.match(String(outcome.result.messages.find((message) => message.role === 'tool')!.content), /bytes_written/);
  assert.deepEqual(sandboxFolders(), [], 'dispose removed it');
});

test('a rollout whose tools use no sandbox creates none', async (t) => {
  const { duringFirstCall, outcome } = await heldRollout(t, ['todo']);
  assert.deepEqual(duringFirstCall, []);
  assert.equal(outcome.result.finishReason, 'stop');
  assert.deepEqual(sandboxFolders(), []);
});
