import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { executeRollout } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import {
  callTool,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

/**
 * A rollout's sandbox is created by its first tool call, never before: a rollout whose model
 * answers without tools pays for no folder (or container). Local sandboxes go under TMPDIR: this
 * file points it at a scratch folder of its own.
 */
const scratch = mkdtempSync(join(tmpdir(), 'traj-sandbox-start-'));
process.env.TMPDIR = scratch;
const services = createThreadServices();
after(async () => {
  await services.close();
  rmSync(scratch, { recursive: true, force: true });
});

const sandboxFolders = () => readdirSync(scratch).filter((name) => name.startsWith('traj-sbx-'));

const settings = (baseUrl: string) =>
  scriptedRolloutSettings(baseUrl, 'rollout-sandbox-start-test', {
    sandbox: { kind: 'local', local: { isolation: 'none' } },
  });

/**
 * Holds the first model call until the test has looked at the temp dir; then one write_file (or,
 * with `callsTool` false, an answer at once), then an answer. The second request counts the folders.
 */
async function heldRollout(t: { after(fn: () => unknown): void }, toolsets: string[], callsTool = true) {
  let foldersAtToolCall: number | undefined;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let firstCallArrived!: () => void;
  const arrived = new Promise<void>((resolve) => {
    firstCallArrived = resolve;
  });
  const server = await startScriptedServer(async (request: ChatRequest): Promise<ScriptedResponse> => {
    if (request.messages.some((message) => message.role === 'tool')) {
      foldersAtToolCall = sandboxFolders().length;
      return reply('saved');
    }
    firstCallArrived();
    await released;
    return callsTool ? callTool('write_file', { path: 'note.txt', content: 'hi\n' }) : reply('done');
  });
  t.after(() => server.close());
  const outcome = executeRollout(
    { key: 'k', sample: 0, toolsets, messages: [{ role: 'user', content: 'go' }], settings: settings(server.url) },
    services,
    new AbortController().signal,
  );
  await arrived;
  // Anything started beside the call would have landed by now.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const duringFirstCall = sandboxFolders();
  release();
  const result = await outcome;
  return { duringFirstCall, foldersAtToolCall, outcome: result };
}

test('a rollout offering file tools has no sandbox folder until its first tool call, and none after', async (t) => {
  const { duringFirstCall, foldersAtToolCall, outcome } = await heldRollout(t, ['file']);
  assert.deepEqual(duringFirstCall, [], 'no folder while the first model call is out');
  assert.equal(foldersAtToolCall, 1, 'the write_file call made one');
  assert.equal(outcome.result.finishReason, 'stop');
  assert.match(String(outcome.result.messages.find((message) => message.role === 'tool')!.content), /bytes_written/);
  assert.deepEqual(sandboxFolders(), [], 'dispose removed it');
});

test('a rollout whose model never calls a tool creates no sandbox', async (t) => {
  const { duringFirstCall, foldersAtToolCall, outcome } = await heldRollout(t, ['file'], false);
  assert.deepEqual(duringFirstCall, []);
  assert.equal(foldersAtToolCall, undefined);
  assert.equal(outcome.result.finishReason, 'stop');
  assert.deepEqual(sandboxFolders(), []);
});
