import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModelClient } from '../../src/model/client.js';
import { reply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

const answer = () => reply('ok');

test('the per-endpoint cap bounds the requests in flight at the server', async () => {
  await withServer(
    answer,
    async (server) => {
      const client = createModelClient(endpointFor(server, { concurrency: 3 }), FAST);
      const responses = await Promise.all(Array.from({ length: 12 }, () => client.complete({ messages: HELLO })));
      assert.equal(responses.length, 12);
      assert.equal(server.requestCount(), 12);
      assert.equal(server.maxInFlight(), 3, 'the cap is reached and never exceeded');
    },
    { latencyMs: 40 },
  );
});

test('clients of one base URL share one cap', async () => {
  await withServer(
    answer,
    async (server) => {
      const first = createModelClient(endpointFor(server, { concurrency: 2 }), FAST);
      const second = createModelClient(endpointFor(server, { concurrency: 2 }), FAST);
      const calls = Array.from({ length: 10 }, (_, index) =>
        (index % 2 ? first : second).complete({ messages: HELLO }),
      );
      await Promise.all(calls);
      assert.equal(server.requestCount(), 10);
      assert.equal(server.maxInFlight(), 2);
    },
    { latencyMs: 40 },
  );
});

test('control: without a tight cap the server does see parallel requests', async () => {
  await withServer(
    answer,
    async (server) => {
      const client = createModelClient(endpointFor(server, { concurrency: 64 }), FAST);
      await Promise.all(Array.from({ length: 8 }, () => client.complete({ messages: HELLO })));
      assert.ok(server.maxInFlight() > 3, `expected more than 3 in flight, saw ${server.maxInFlight()}`);
    },
    { latencyMs: 150 },
  );
});

test('an abort while waiting for a slot rejects at once and never reaches the server', async () => {
  await withServer(
    answer,
    async (server) => {
      const client = createModelClient(endpointFor(server, { concurrency: 1 }), FAST);
      const first = client.complete({ messages: HELLO });
      const controller = new AbortController();
      const queued = client.complete({ messages: HELLO, signal: controller.signal });
      controller.abort();
      await assert.rejects(queued, { code: 'aborted' });
      await first;
      assert.equal(server.requestCount(), 1);
    },
    { latencyMs: 100 },
  );
});
