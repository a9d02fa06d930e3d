import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { BrowserConfigSchema } from '../../src/config/browser.js';
import { executeRollout, type RolloutSettings } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import { callTool, delayed, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { findChromium, threadBrowserEngine } from '../../src/tools/index.js';
import { startBrowserSite } from '../helpers/browser-site.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';
import { ToolSettingsSchema } from '../../src/config/tool-settings.js';

/**
 * The rollout executor closes a rollout's browser context on every way a rollout ends: an
 * answer, an interrupt (SIGINT reaches rollouts as this abort), and --rollout-timeout.
 */
const skip = findChromium() ? false : 'skipped: no chromium on PATH (apt-get install chromium)';
const services = createThreadServices();
after(() => services.close());
const browser = BrowserConfigSchema.parse({ navigation_timeout_ms: 10_000 });
const engine = threadBrowserEngine(browser);

function settings(baseUrl: string, extra: Partial<RolloutSettings> = {}): RolloutSettings {
  return scriptedRolloutSettings(baseUrl, 'rollout-browser-test', {
    maxTurns: 5,
    tools: ToolSettingsSchema.parse({ web: { allow_private: true }, browser }),
    ...extra,
  });
}

/** Navigate, then (the second model turn) answer after `holdMs`, or at once. */
async function setup(t: { after(fn: () => unknown): void }, holdMs: number) {
  const site = await startBrowserSite();
  t.after(() => site.close());
  const server = await startScriptedServer((request: ChatRequest) =>
    request.messages.some((message) => message.role === 'tool')
      ? delayed(holdMs, reply('done'))
      : callTool('browser_navigate', { url: `${site.url}/page/1` }),
  );
  t.after(() => server.close());
  return {
    server,
    task: (extra: Partial<RolloutSettings> = {}) => ({
      key: 'k',
      sample: 0,
      toolsets: ['browser'],
      messages: [{ role: 'user' as const, content: 'go' }],
      settings: settings(server.url, extra),
    }),
  };
}

/** Wait until the second model request (the browser context is open by then). */
async function untilBrowsing(server: { requests: unknown[] }): Promise<void> {
  while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
}

test('a finished rollout closes its browser context', { skip }, async (t) => {
  const { task } = await setup(t, 0);
  const outcome = await executeRollout(task(), services, new AbortController().signal);
  assert.equal(outcome.result.finishReason, 'stop');
  assert.match(
    String(outcome.result.messages.find((message) => message.role === 'tool')!.content),
    /holds the word apple/,
  );
  assert.equal(engine.openContexts, 0);
});

test('an interrupted rollout (SIGINT) closes its browser context', { skip }, async (t) => {
  const { server, task } = await setup(t, 30_000);
  const interrupt = new AbortController();
  const running = executeRollout(task(), services, interrupt.signal);
  await untilBrowsing(server);
  assert.equal(engine.openContexts, 1);
  interrupt.abort(new Error('SIGINT'));
  const outcome = await running;
  assert.equal(outcome.interrupted, true);
  assert.equal(engine.openContexts, 0);
});

test('a rollout past --rollout-timeout closes its browser context', { skip }, async (t) => {
  const { server, task } = await setup(t, 30_000);
  const running = executeRollout(task({ rolloutTimeoutMs: 4_000 }), services, new AbortController().signal);
  await untilBrowsing(server);
  assert.equal(engine.openContexts, 1);
  const outcome = await running;
  assert.equal(outcome.error?.code, 'rollout_timeout');
  assert.equal(engine.openContexts, 0);
});
