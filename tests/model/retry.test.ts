import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelError } from '../../src/errors.js';
import { createModelClient } from '../../src/model/client.js';
import { backoffDelay, parseRetryAfter, type RetryEvent } from '../../src/model/retry.js';
import { delayed, dropConnection, httpError, rateLimited, reply } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

test('a 429 with retry-after-ms is waited out as asked, then the answer is returned', async () => {
  const script = [
    httpError(429, { message: 'slow down', headers: { 'retry-after-ms': '30' } }),
    reply('after the wait'),
  ];
  await withServer(script, async (server) => {
    const retries: RetryEvent[] = [];
    const client = createModelClient(endpointFor(server), { ...FAST, onRetry: (event) => retries.push(event) });
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'after the wait');
    assert.equal(response.attempts, 2);
    assert.equal(server.requestCount(), 2);
    assert.equal(retries.length, 1);
    assert.equal(retries[0]!.delayMs, 30, 'the delay is the server-given one, not a jittered backoff');
    assert.equal(retries[0]!.failure.status, 429);
    assert.equal(retries[0]!.failure.message, 'slow down');
  });
});

test('retry-after in seconds is honoured up to the maximum delay', async () => {
  await withServer([rateLimited(1), reply('ok')], async (server) => {
    const delays: number[] = [];
    const client = createModelClient(endpointFor(server), { ...FAST, onRetry: (event) => delays.push(event.delayMs) });
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'ok');
    assert.deepEqual(delays, [40], '1 s asked, capped by maxDelayMs = 40');
  });
});

test('retry-after parsing: milliseconds first, then seconds, then an HTTP date', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now), 250);
  assert.equal(parseRetryAfter(new Headers({ 'retry-after': '2' }), now), 2_000);
  assert.equal(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now), 500);
  assert.equal(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), now), 3_000);
  assert.equal(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now), 0);
  assert.equal(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now), undefined);
  assert.equal(parseRetryAfter(new Headers(), now), undefined);
});

test('backoff is full jitter under an exponential ceiling capped by the maximum', () => {
  const delays = { baseDelayMs: 100, maxDelayMs: 1_000 };
  for (let round = 0; round < 200; round++) {
    assert.ok(backoffDelay(1, undefined, delays) <= 100);
    assert.ok(backoffDelay(3, undefined, delays) <= 400);
    assert.ok(backoffDelay(10, undefined, delays) <= 1_000);
  }
  const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, undefined, delays)));
  assert.ok(spread.size > 10, 'delays are randomised');
});

test('retries exhausted: a retryable ModelError naming the endpoint, the model, the status and the message', async () => {
  const failure = httpError(500, { message: 'upstream exploded' });
  await withServer([failure, failure, failure, reply('too late')], async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 2 }), FAST);
    const error = await client.complete({ messages: HELLO }).then(
      () => assert.fail('expected a ModelError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ModelError);
    assert.equal(error.code, 'model_unavailable');
    assert.equal(error.retryable, true);
    assert.match(error.message, new RegExp(server.url.replace(/[.]/g, '\\.')));
    assert.match(error.message, /scripted-test-model/);
    assert.match(error.message, /HTTP 500/);
    assert.match(error.message, /upstream exploded/);
    assert.match(error.message, /3 attempts/);
    assert.equal(server.requestCount(), 3, 'one attempt plus max_retries = 2');
  });
});

test('a 400 fails at once with the server message and is not retryable', async () => {
  await withServer([httpError(400, { message: "'messages' must not be empty" }), reply('never')], async (server) => {
    const client = createModelClient(endpointFor(server), FAST);
    await assert.rejects(client.complete({ messages: HELLO }), (error: unknown) => {
      assert.ok(error instanceof ModelError);
      assert.equal(error.code, 'model_request_rejected');
      assert.equal(error.retryable, false);
      assert.match(error.message, /HTTP 400: 'messages' must not be empty/);
      return true;
    });
    assert.equal(server.requestCount(), 1);
  });
});

test('a dropped connection is retried', async () => {
  await withServer([dropConnection(), reply('after the drop')], async (server) => {
    const client = createModelClient(endpointFor(server), FAST);
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'after the drop');
    assert.equal(response.attempts, 2);
    assert.equal(server.requestCount(), 2);
  });
});

test('a response slower than timeout_ms is abandoned and retried', async () => {
  await withServer([delayed(10_000, reply('too slow')), reply('in time')], async (server) => {
    const failures: string[] = [];
    const client = createModelClient(endpointFor(server, { timeout_ms: 500 }), {
      ...FAST,
      onRetry: (event) => failures.push(event.failure.message),
    });
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'in time');
    assert.equal(server.requestCount(), 2);
    assert.match(failures[0]!, /within 500 ms|timed out/);
  });
});

test('an abort during the backoff sleep ends the call at once with code aborted', { timeout: 15_000 }, async () => {
  await withServer([httpError(503, { retryAfter: 30 }), reply('never')], async (server) => {
    const controller = new AbortController();
    const client = createModelClient(endpointFor(server), {
      env: {},
      retry: { baseDelayMs: 1_000, maxDelayMs: 60_000 },
      onRetry: () => controller.abort(),
    });
    await assert.rejects(client.complete({ messages: HELLO, signal: controller.signal }), (error: unknown) => {
      assert.ok(error instanceof ModelError);
      assert.equal(error.code, 'aborted');
      return true;
    });
    assert.equal(server.requestCount(), 1, 'no second attempt after the abort');
  });
});

test('an abort while the request is in flight ends the call at once', { timeout: 15_000 }, async () => {
  const controller = new AbortController();
  const script = () => {
    controller.abort();
    return delayed(30_000, reply('never'));
  };
  await withServer(script, async (server) => {
    const client = createModelClient(endpointFor(server), FAST);
    await assert.rejects(client.complete({ messages: HELLO, signal: controller.signal }), (error: unknown) => {
      assert.ok(error instanceof ModelError);
      assert.equal(error.code, 'aborted');
      return true;
    });
    assert.equal(server.requestCount(), 1);
  });
});
