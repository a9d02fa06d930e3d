import assert from 'node:assert/strict';
import { test } from 'node:test';
import { executeRollout, type RolloutServices } from '../../src/run/rollout.js';
import { createThreadServices, type TeardownLimits } from '../../src/run/worker-services.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

/**
 * Pool threads hand a finished rollout's teardown to their services: the outcome returns while
 * the sandbox is still being disposed, and closing the services waits for it. Without
 * `deferTeardowns` (traj ask, tests) a rollout returns only once its sandbox is gone.
 */
const settings = (baseUrl: string) =>
  scriptedRolloutSettings(baseUrl, 'deferred-teardown-test', {
    sandbox: { kind: 'local', local: { isolation: 'none' } },
  });

/** Thread services whose sandboxes finish disposing only when the test says so. */
function withHeldDispose(deferTeardowns: boolean | Partial<TeardownLimits>) {
  const base = createThreadServices({ deferTeardowns });
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { disposed: false, started: 0, finished: 0 };
  const services: RolloutServices & { close(): Promise<void> } = {
    ...base,
    createSandbox: async (options) => {
      const sandbox = await base.createSandbox(options);
      return new Proxy(sandbox, {
        get(target, property, receiver) {
          if (property !== 'dispose') return Reflect.get(target, property, receiver);
          return async () => {
            state.started++;
            await held;
            await target.dispose();
            state.finished++;
            state.disposed = true;
          };
        },
      }) as Sandbox;
    },
  };
  return { services, release, state };
}

async function rolloutWithOneFileCall(t: { after(fn: () => unknown): void }, services: RolloutServices) {
  const server = await startScriptedServer((request: ChatRequest) =>
    request.messages.some((message) => message.role === 'tool')
      ? reply('saved')
      : callTool('write_file', { path: 'note.txt', content: 'hi\n' }),
  );
  t.after(() => server.close());
  return executeRollout(
    {
      key: 'k',
      sample: 0,
      toolsets: ['file'],
      messages: [{ role: 'user', content: 'go' }],
      settings: settings(server.url),
    },
    services,
    new AbortController().signal,
  );
}

test('with deferTeardowns the outcome returns before the sandbox is gone, and close waits for it', async (t) => {
  const { services, release, state } = withHeldDispose(true);
  // A failed assertion must not leave teardowns held.
  t.after(release);
  const rollout = rolloutWithOneFileCall(t, services);
  const first = await Promise.race([
    rollout,
    new Promise<'waiting'>((resolve) => setTimeout(resolve, 10_000, 'waiting')),
  ]);
  if (first === 'waiting') {
    release();
    await rollout;
    assert.fail('the rollout waited for its held teardown');
  }
  const outcome = await rollout;
  assert.equal(outcome.result.finishReason, 'stop');
  assert.equal(state.disposed, false, 'the rollout did not wait for its teardown');
  let closed = false;
  const closing = services.close().then(() => {
    closed = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(closed, false, 'close waits for the teardown');
  release();
  await closing;
  assert.equal(state.disposed, true);
});

test('without it a rollout returns only once its sandbox is disposed', async (t) => {
  const { services, release, state } = withHeldDispose(false);
  // A failed assertion must not leave teardowns held.
  t.after(release);
  t.after(() => services.close());
  const pending = rolloutWithOneFileCall(t, services);
  let returned = false;
  void pending.then(() => {
    returned = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(returned, false, 'still waiting for the held dispose');
  release();
  const outcome = await pending;
  assert.equal(outcome.result.finishReason, 'stop');
  assert.equal(state.disposed, true);
});

test('a thread runs a few teardowns at once, and past the pending cap a rollout waits for its own', async (t) => {
  const { services, release, state } = withHeldDispose({ atOnce: 2, mostPending: 3 });
  // A failed assertion must not leave teardowns held.
  t.after(release);
  for (let index = 0; index < 3; index++) await rolloutWithOneFileCall(t, services);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(state.started, 2, 'two teardowns run, the third waits its turn');
  const fourth = rolloutWithOneFileCall(t, services);
  let returned = false;
  void fourth.then(() => {
    returned = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(returned, false, 'a fourth pending teardown is past the cap: that rollout waits');
  release();
  await fourth;
  await services.close();
  assert.equal(state.finished, 4);
});
