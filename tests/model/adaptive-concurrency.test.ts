import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createModelClient } from '../../src/model/client.js';
import { endpointGate, type EndpointGate } from '../../src/model/concurrency.js';
import { delayed, httpError, reply, type ScriptedServer } from '../../src/testing/index.js';
import { endpointFor, FAST, HELLO, withServer } from './scripted-endpoint.js';

/** The gate the client of this server uses in this thread, made before the client's first call with the client's limits. */
function gateOf(server: ScriptedServer, max: number, min = 1, adaptive = true): EndpointGate {
  return endpointGate(server.url, { min, max, adaptive });
}

/** Reads the gate's level every few milliseconds while `work` runs: the lowest and highest seen. */
async function watchLevel(gate: EndpointGate, work: () => Promise<unknown>): Promise<{ low: number; high: number }> {
  let low = Number.POSITIVE_INFINITY;
  let high = 0;
  const read = () => {
    const { level } = gate.snapshot();
    low = Math.min(low, level);
    high = Math.max(high, level);
  };
  const timer = setInterval(read, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
    read();
  }
  return { low, high };
}

/** `callers` loops, each sending `calls` requests one after another (rollouts with one request in flight each). */
async function load(complete: () => Promise<unknown>, callers: number, calls: number): Promise<void> {
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let call = 0; call < calls; call++) await complete();
    }),
  );
}

test('the level drops on 429 and rises back to the cap once the endpoint accepts again', async () => {
  let limit = 4;
  let server: ScriptedServer | undefined;
  // inFlight() counts this request too: more than `limit` answered at once is refused at once.
  const script = () =>
    server!.inFlight() > limit ? httpError(429, { message: 'slow down' }) : delayed(20, reply('ok'));
  await withServer(script, async (started) => {
    server = started;
    const client = createModelClient(endpointFor(started, { concurrency: 16, max_retries: 0 }), FAST);
    const gate = gateOf(started, 16);
    const complete = () => client.complete({ messages: HELLO });
    const refused = await watchLevel(gate, () => load(complete, 16, 6));
    const afterRefusals = gate.snapshot();
    assert.ok(afterRefusals.rateLimited > 0, 'the server did refuse');
    assert.ok(refused.low <= 5, `the level came down to the endpoint's 4, lowest seen ${refused.low}`);
    assert.equal(refused.high, 16, 'it started at the cap');
    assert.ok(afterRefusals.level < 16);
    limit = 1_000;
    const recovered = await watchLevel(gate, () => load(complete, 16, 60));
    assert.equal(gate.snapshot().level, 16, `back at the cap after successes (lowest ${recovered.low})`);
    assert.ok(recovered.high <= 16, 'never above the cap');
    assert.ok(started.maxInFlight() <= 16, `the server saw ${started.maxInFlight()} at once, past the cap of 16`);
    assert.equal(started.requestCount() - gate.snapshot().rateLimited, 16 * 6 + 16 * 60, 'every call answered');
  });
});

test('a 429 never uses max_retries: max_retries 0 still succeeds after several refusals', async () => {
  const script = [httpError(429), httpError(429), httpError(429), reply('at last')];
  await withServer(script, async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 0 }), FAST);
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'at last');
    assert.equal(response.attempts, 4);
  });
});

test('control: a 500 does use max_retries (max_retries 0 fails at once)', async () => {
  await withServer([httpError(500), reply('never')], async (server) => {
    const client = createModelClient(endpointFor(server, { max_retries: 0 }), FAST);
    await assert.rejects(client.complete({ messages: HELLO }), { code: 'model_unavailable' });
    assert.equal(server.requestCount(), 1);
  });
});

test('an endpoint refusing past max_rate_limit_wait_ms is model_rate_limited (a run-level fault)', async () => {
  await withServer(
    () => httpError(429, { message: 'quota exceeded' }),
    async (server) => {
      const client = createModelClient(endpointFor(server, { max_rate_limit_wait_ms: 100 }), FAST);
      await assert.rejects(client.complete({ messages: HELLO }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'model_rate_limited');
        assert.match(error.message, /max_rate_limit_wait_ms.*quota exceeded/);
        return true;
      });
      assert.ok(server.requestCount() >= 3, 'retried several times before giving up');
    },
  );
});

test('retry-after is honoured by the whole endpoint: no request starts before it, none is lost', async () => {
  const arrivals: number[] = [];
  let refusedAt = 0;
  const script = (_request: unknown, { index }: { index: number }) => {
    arrivals.push(Date.now());
    if (index > 0) return reply('ok');
    refusedAt = Date.now();
    return httpError(429, { retryAfter: 1 });
  };
  await withServer(script, async (server) => {
    const client = createModelClient(endpointFor(server, { concurrency: 8 }), {
      ...FAST,
      retry: { baseDelayMs: 5, maxDelayMs: 5_000 },
    });
    const first = client.complete({ messages: HELLO });
    while (server.requestCount() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Sent after the 429 reached the client: it waits for the retry-after like the refused one.
    const others = Array.from({ length: 5 }, () => client.complete({ messages: HELLO }));
    await Promise.all([first, ...others]);
    assert.equal(arrivals.length, 7, 'the refused call and five more, each answered once');
    const earliest = Math.min(...arrivals.slice(1)) - refusedAt;
    assert.ok(earliest >= 950, `a request reached the server ${earliest} ms after a 429 asking for 1 s`);
  });
});

test('retry-after as an HTTP date closes the gate until that date', async () => {
  let refusedAt = 0;
  const arrivals: number[] = [];
  const script = (_request: unknown, { index }: { index: number }) => {
    arrivals.push(Date.now());
    if (index > 0) return reply('ok');
    refusedAt = Date.now();
    // HTTP dates have whole seconds: at least one full second from now.
    const date = new Date(Math.ceil(refusedAt / 1000) * 1000 + 1000).toUTCString();
    return httpError(429, { headers: { 'retry-after': date } });
  };
  await withServer(script, async (server) => {
    const client = createModelClient(endpointFor(server), { ...FAST, retry: { baseDelayMs: 5, maxDelayMs: 5_000 } });
    const first = client.complete({ messages: HELLO });
    while (server.requestCount() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all([first, client.complete({ messages: HELLO })]);
    const earliest = Math.min(...arrivals.slice(1)) - refusedAt;
    assert.ok(earliest >= 950, `a request reached the server ${earliest} ms after a 429 dated ≥ 1 s ahead`);
  });
});

test('never past the hard cap, even with many more callers and no refusal', async () => {
  await withServer(
    () => reply('ok'),
    async (server) => {
      const client = createModelClient(endpointFor(server, { concurrency: 8 }), FAST);
      await load(() => client.complete({ messages: HELLO }), 100, 3);
      assert.equal(server.maxInFlight(), 8, 'the cap is used and never exceeded');
    },
    { latencyMs: 20 },
  );
});

test('never below min_concurrency, however often the endpoint refuses', async () => {
  let server: ScriptedServer | undefined;
  const script = () => (server!.inFlight() > 1 ? httpError(429) : delayed(10, reply('ok')));
  await withServer(script, async (started) => {
    server = started;
    const client = createModelClient(endpointFor(started, { concurrency: 12, min_concurrency: 3 }), FAST);
    const gate = gateOf(started, 12, 3);
    const seen = await watchLevel(gate, () => load(() => client.complete({ messages: HELLO }), 12, 5));
    assert.ok(gate.snapshot().rateLimited > 5, 'refused often');
    assert.equal(seen.low, 3, 'down to min_concurrency and never below it');
  });
});

test('adaptive: false keeps the level at the cap through 429s', async () => {
  let server: ScriptedServer | undefined;
  const script = () => (server!.inFlight() > 2 ? httpError(429) : delayed(10, reply('ok')));
  await withServer(script, async (started) => {
    server = started;
    const client = createModelClient(endpointFor(started, { concurrency: 6, adaptive: false }), FAST);
    const gate = gateOf(started, 6, 1, false);
    const seen = await watchLevel(gate, () => load(() => client.complete({ messages: HELLO }), 6, 4));
    assert.ok(gate.snapshot().rateLimited > 0);
    assert.deepEqual(seen, { low: 6, high: 6 });
  });
});
